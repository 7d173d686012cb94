// libpq, PostgreSQL's client library (Debian: libpq-dev; macOS: brew install libpq).
// The include path comes from pkg-config (libpq.pc).
#include <libpq-fe.h>
