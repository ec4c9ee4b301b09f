/*
 * bench-sqlite: the SQLite comparison peer of scripts/bench (docs/PERFORMANCE.md, figure 1).
 *
 * Inserts COUNT rows of PAYLOAD random bytes into a fresh database in WAL mode with
 * synchronous=FULL, one INSERT per transaction (autocommit), from PRODUCERS threads, each with its
 * own connection and a busy timeout (SQLite has one write lock, so concurrent writers serialise on
 * it). Prints one line: "ops_per_sec=<rate> seconds=<elapsed> rows=<count>".
 *
 * It is a comparison peer for the benchmark only, never a dependency of the daemons.
 * Build: cc -O2 -o .build/bench-sqlite scripts/bench-sqlite.c -lsqlite3 -lpthread
 * Usage: bench-sqlite DATABASE PAYLOAD_BYTES COUNT PRODUCERS
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *database;
static int payload_bytes;
static long per_thread;
static pthread_barrier_t start_line;

static void fail(sqlite3 *db, const char *what) {
    fprintf(stderr, "bench-sqlite: %s: %s\n", what, db ? sqlite3_errmsg(db) : "out of memory");
    exit(1);
}

static sqlite3 *open_connection(void) {
    sqlite3 *db = NULL;
    if (sqlite3_open(database, &db) != SQLITE_OK) fail(db, "open");
    sqlite3_busy_timeout(db, 60000);
    if (sqlite3_exec(db, "PRAGMA synchronous=FULL", NULL, NULL, NULL) != SQLITE_OK) fail(db, "synchronous");
    return db;
}

static void *producer(void *unused) {
    (void)unused;
    sqlite3 *db = open_connection();
    sqlite3_stmt *insert = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO transfers(payload) VALUES (?1)", -1, &insert, NULL) != SQLITE_OK)
        fail(db, "prepare");
    unsigned char *payload = malloc(payload_bytes);
    if (!payload) fail(NULL, "malloc");
    unsigned int seed = (unsigned int)(size_t)&db;
    for (int i = 0; i < payload_bytes; i++) payload[i] = (unsigned char)rand_r(&seed);
    pthread_barrier_wait(&start_line);
    for (long i = 0; i < per_thread; i++) {
        payload[0] = (unsigned char)i;
        sqlite3_bind_blob(insert, 1, payload, payload_bytes, SQLITE_STATIC);
        int rc;
        while ((rc = sqlite3_step(insert)) == SQLITE_BUSY) sqlite3_reset(insert);
        if (rc != SQLITE_DONE) fail(db, "insert");
        sqlite3_reset(insert);
    }
    free(payload);
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: bench-sqlite DATABASE PAYLOAD_BYTES COUNT PRODUCERS\n");
        return 64;
    }
    database = argv[1];
    payload_bytes = atoi(argv[2]);
    long count = atol(argv[3]);
    int producers = atoi(argv[4]);
    if (payload_bytes < 1 || count < 1 || producers < 1 || producers > 256) {
        fprintf(stderr, "bench-sqlite: PAYLOAD_BYTES, COUNT and PRODUCERS must be positive (PRODUCERS <= 256)\n");
        return 64;
    }
    per_thread = count / producers;
    if (per_thread < 1) per_thread = 1;

    sqlite3 *setup = open_connection();
    if (sqlite3_exec(setup, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK) fail(setup, "journal_mode");
    if (sqlite3_exec(setup, "CREATE TABLE IF NOT EXISTS transfers(sequence INTEGER PRIMARY KEY, payload BLOB NOT NULL)",
                     NULL, NULL, NULL) != SQLITE_OK)
        fail(setup, "create table");

    pthread_t threads[256];
    pthread_barrier_init(&start_line, NULL, (unsigned)producers + 1);
    for (int t = 0; t < producers; t++) pthread_create(&threads[t], NULL, producer, NULL);
    pthread_barrier_wait(&start_line);
    struct timespec begin, end;
    clock_gettime(CLOCK_MONOTONIC, &begin);
    for (int t = 0; t < producers; t++) pthread_join(threads[t], NULL);
    clock_gettime(CLOCK_MONOTONIC, &end);
    sqlite3_close(setup);

    double seconds = (double)(end.tv_sec - begin.tv_sec) + (double)(end.tv_nsec - begin.tv_nsec) / 1e9;
    long rows = per_thread * producers;
    printf("ops_per_sec=%.1f seconds=%.6f rows=%ld\n", (double)rows / seconds, seconds, rows);
    return 0;
}
