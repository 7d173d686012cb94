#include <sqlite3.h>

/* sqlite3_db_config is variadic, which Swift cannot call: this sets one of its on/off flags
   (SQLITE_DBCONFIG_DEFENSIVE, _ENABLE_FTS3_TOKENIZER, …) and returns SQLite's result code.
   https://sqlite.org/c3ref/db_config.html */
static inline int lctrace_db_config_flag(sqlite3 *db, int op, int on) {
    int now = -1;
    return sqlite3_db_config(db, op, on, &now);
}
