/* SQLite as a program of time steps for the paired harness (scripts/nas-paired --program
 * sqlite): each copy (plain and instrumented, the amalgamation compiled into each) builds an
 * indexed table in an in-memory database, then runs the same batch of statements STEPS times,
 * each batch one NAS_STEP: inserts, an indexed range scan, a sort, a grouping and a join, and
 * the batch's rows deleted again so that every step finds the same database. */
#include "sqlite3.h"
#include <stdio.h>

#define STEPS 120

static const char *setup =
    "PRAGMA journal_mode=OFF;"
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"
    "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<20000)"
    " INSERT INTO t SELECT x, hex(x*2654435761 % 1000003), x*1.5 FROM s;"
    "CREATE INDEX tb ON t(b);";

static const char *batch =
    "WITH RECURSIVE s(x) AS (SELECT 20001 UNION ALL SELECT x+1 FROM s WHERE x<21000)"
    " INSERT INTO t SELECT x, hex(x*2654435761 % 1000003), x*1.5 FROM s;"
    "SELECT count(*), sum(c) FROM t WHERE b > '8' AND b < '9';"
    "SELECT b FROM t ORDER BY c DESC LIMIT 5 OFFSET 100;"
    "SELECT a%50, count(*), avg(c) FROM t GROUP BY a%50 ORDER BY 2 DESC LIMIT 3;"
    "SELECT count(*) FROM t t1 JOIN t t2 ON t1.b = t2.b WHERE t1.a < 3000;"
    "DELETE FROM t WHERE a > 20000;";

static long long rows;

static int count_row(void *unused, int columns, char **values, char **names) {
    (void)unused, (void)values, (void)names;
    rows += columns;
    return 0;
}

/* The step event: its inclusive time is one step's, its compensated time what the harness
 * compares with the plain copy's step. A loop (of one batch), so that the pass keeps it however
 * small it is (pass/src/skip.rs). */
__attribute__((noinline)) int paired_step(sqlite3 *db, int batches) {
    int status = SQLITE_OK;
    for (int i = 0; i < batches && status == SQLITE_OK; i++)
        status = sqlite3_exec(db, batch, count_row, NULL, NULL);
    return status;
}

int main(void) {
    sqlite3 *db;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, setup, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlite_steps: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    for (int i = 0; i < STEPS; i++) {
        int status;
        NAS_STEP(status = paired_step(db, 1));
        if (status != SQLITE_OK) {
            fprintf(stderr, "sqlite_steps: %s\n", sqlite3_errmsg(db));
            return 1;
        }
    }
    printf("%lld\n", rows);
    sqlite3_close(db);
    return 0;
}
