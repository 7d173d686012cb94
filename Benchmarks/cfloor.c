/*
 * The "C floor" peer of the lctrace benchmark: the least a loader can do.
 *
 *   cfloor scan FILE...         gunzip + a crude scan for sid/seq/t/ev, no storage
 *   cfloor sqlite DB FILE...    the same scan + SQLite inserts: sessions interned, events in a
 *                               WITHOUT ROWID table keyed on (session, seq), event names
 *                               interned, the whole line kept as text when KEEP_LINE=1
 *                               ("unknown keys kept"), one transaction per file.
 *
 * No validation, no de-duplication beyond the primary key, no model: a floor, not a peer
 * that could replace lctrace. Written for this benchmark; built by Benchmarks/bench.py.
 */
#define _GNU_SOURCE
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *find_value(const char *line, size_t n, const char *key, size_t klen) {
    const char *p = line, *end = line + n;
    while ((p = memmem(p, (size_t)(end - p), key, klen)) != NULL) {
        p += klen;
        return p;
    }
    return NULL;
}

static long long parse_int(const char *p) {
    long long v = 0;
    while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
    return v;
}

static size_t string_len(const char *p) {
    const char *q = p;
    while (*q && *q != '"') q++;
    return (size_t)(q - p);
}

#define SLOTS 4096
typedef struct { char *text; long long id; } slot;
static slot table[2][SLOTS];
static long long next_id[2] = {1, 1};

static long long intern(int which, const char *p, size_t n, sqlite3_stmt *insert) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)p[i]) * 16777619u;
    for (unsigned i = h % SLOTS;; i = (i + 1) % SLOTS) {
        if (!table[which][i].text) {
            table[which][i].text = strndup(p, n);
            table[which][i].id = next_id[which]++;
            if (insert) {
                sqlite3_bind_int64(insert, 1, table[which][i].id);
                sqlite3_bind_text(insert, 2, p, (int)n, SQLITE_TRANSIENT);
                sqlite3_step(insert);
                sqlite3_reset(insert);
            }
            return table[which][i].id;
        }
        if (strlen(table[which][i].text) == n && memcmp(table[which][i].text, p, n) == 0) return table[which][i].id;
    }
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: cfloor scan FILE... | cfloor sqlite DB FILE...\n"); return 64; }
    int store = strcmp(argv[1], "sqlite") == 0;
    int first = store ? 3 : 2;
    int keep_line = getenv("KEEP_LINE") && strcmp(getenv("KEEP_LINE"), "1") == 0;
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL, *ins_session = NULL, *ins_name = NULL;
    if (store) {
        if (sqlite3_open(argv[2], &db) != SQLITE_OK) return 74;
        sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                         "CREATE TABLE IF NOT EXISTS sessions(id INTEGER PRIMARY KEY, sid TEXT UNIQUE);"
                         "CREATE TABLE IF NOT EXISTS names(id INTEGER PRIMARY KEY, name TEXT UNIQUE);"
                         "CREATE TABLE IF NOT EXISTS events(session INT, seq INT, t INT, ev INT, line TEXT,"
                         " PRIMARY KEY(session, seq)) WITHOUT ROWID;", 0, 0, 0);
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO events VALUES (?,?,?,?,?)", -1, &ins, 0);
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO sessions VALUES (?,?)", -1, &ins_session, 0);
        sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO names VALUES (?,?)", -1, &ins_name, 0);
    }
    static char line[1 << 20];
    long long events = 0, checksum = 0;
    for (int f = first; f < argc; f++) {
        gzFile gz = gzopen(argv[f], "rb");
        if (!gz) { perror(argv[f]); continue; }
        gzbuffer(gz, 1 << 17);
        if (store) sqlite3_exec(db, "BEGIN", 0, 0, 0);
        while (gzgets(gz, line, sizeof line)) {
            size_t n = strlen(line);
            const char *sid = find_value(line, n, "\"sid\":\"", 7);
            const char *seq = find_value(line, n, "\"seq\":", 6);
            const char *t = find_value(line, n, "\"t\":", 4);
            const char *ev = find_value(line, n, "\"ev\":\"", 6);
            if (!sid || !seq || !t || !ev) continue;
            long long s = parse_int(seq), tt = parse_int(t);
            size_t evlen = string_len(ev), sidlen = string_len(sid);
            events++;
            checksum += s + tt + (long long)evlen;
            if (!store) continue;
            long long session = intern(0, sid, sidlen, ins_session);
            long long name = intern(1, ev, evlen, ins_name);
            sqlite3_bind_int64(ins, 1, session);
            sqlite3_bind_int64(ins, 2, s);
            sqlite3_bind_int64(ins, 3, tt);
            sqlite3_bind_int64(ins, 4, name);
            if (keep_line) sqlite3_bind_text(ins, 5, line, (int)n - 1, SQLITE_STATIC); else sqlite3_bind_null(ins, 5);
            sqlite3_step(ins);
            sqlite3_reset(ins);
        }
        if (store) sqlite3_exec(db, "COMMIT", 0, 0, 0);
        gzclose(gz);
    }
    if (store) {
        sqlite3_finalize(ins); sqlite3_finalize(ins_session); sqlite3_finalize(ins_name);
        sqlite3_close(db);
    }
    printf("%lld events (checksum %lld)\n", events, checksum);
    return 0;
}
