/* SQLite as a program of time steps for the paired harness (scripts/nas-paired --program
 * sqlite): each copy (plain and instrumented, the amalgamation compiled into each) builds an
 * indexed table in an in-memory database, then runs the same batch of statements STEPS times,
 * each batch one NAS_STEP: inserts, an indexed range scan, a sort, a grouping and a join, and
 * the batch's rows deleted again so that every step finds the same database.
 *
 * With NAS_SQLITE_WORKLOAD=shell in the environment, a step is instead the whole workload the
 * real-program experiment gives the SQLite shell (c-fixtures/bench/sqlite.sql: a 500000-row
 * table built, indexed, scanned, sorted, grouped and joined, then dropped), and NAS_STEPS=N runs
 * N steps (default STEPS): with one, the step is the program's whole run as the experiment times
 * it, start-up transients included (issue 23's note of 2026-12-06: its callpath profile read
 * +10 ±8 % of the plain copy in one step, six processes, and 0 % over 24). */
#include "sqlite3.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEPS 120

static const char *setup =
    "PRAGMA journal_mode=OFF;"
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"
    "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<20000)"
    " INSERT INTO t SELECT x, hex(x*2654435761 % 1000003), x*1.5 FROM s;"
    "CREATE INDEX tb ON t(b);";

static const char *shell_setup = "PRAGMA journal_mode=OFF;";

static const char *shell_batch =
    "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);"
    "WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM s WHERE x<500000)"
    " INSERT INTO t SELECT x, hex(x*2654435761 % 1000003), x*1.5 FROM s;"
    "CREATE INDEX tb ON t(b);"
    "SELECT count(*), sum(c) FROM t WHERE b > '8';"
    "SELECT b FROM t ORDER BY b LIMIT 5 OFFSET 1000;"
    "SELECT a%100, count(*), avg(c) FROM t GROUP BY a%100 ORDER BY 2 DESC LIMIT 3;"
    "SELECT count(*) FROM t t1 JOIN t t2 ON t1.b = t2.b WHERE t1.a < 100000;"
    "DROP TABLE t;";

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
__attribute__((noinline)) int paired_step(sqlite3 *db, const char *statements, int batches) {
    int status = SQLITE_OK;
    for (int i = 0; i < batches && status == SQLITE_OK; i++)
        status = sqlite3_exec(db, statements, count_row, NULL, NULL);
    return status;
}

int main(void) {
    const char *workload = getenv("NAS_SQLITE_WORKLOAD"), *steps_text = getenv("NAS_STEPS");
    int shell = workload != NULL && strcmp(workload, "shell") == 0;
    int steps = steps_text != NULL ? atoi(steps_text) : STEPS;
    if ((workload != NULL && !shell) || steps < 1) {
        fprintf(stderr, "sqlite_steps: NAS_SQLITE_WORKLOAD is shell or unset, NAS_STEPS at least 1\n");
        return 1;
    }
    sqlite3 *db;
    const char *start = shell ? shell_setup : setup, *statements = shell ? shell_batch : batch;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, start, NULL, NULL, NULL) != SQLITE_OK) {
        fprintf(stderr, "sqlite_steps: %s\n", sqlite3_errmsg(db));
        return 1;
    }
    for (int i = 0; i < steps; i++) {
        int status;
        NAS_STEP(status = paired_step(db, statements, 1));
        if (status != SQLITE_OK) {
            fprintf(stderr, "sqlite_steps: %s\n", sqlite3_errmsg(db));
            return 1;
        }
    }
    printf("%lld\n", rows);
    sqlite3_close(db);
    return 0;
}
