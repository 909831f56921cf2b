/* SPDX-License-Identifier: MIT */
/* Description: a real third-party client library compiled with no
 * knowledge of us (Debian's libhiredis) against a real redis-server
 * started here on a loopback port. 1,000 user threads on one worker each
 * issue BLPOP on their own key with a 1 s timeout: they wait inside the
 * server, and all finish in about one timeout (not a thousand). Then the
 * same with a pusher thread waking them one by one. Skips (77) if
 * redis-server is not installed or cannot start.
 *
 * The port is one the kernel just handed out (bound to port 0, then
 * closed), and the server counts as up only once it answers PING: a port
 * picked by formula could be taken by another test's connection, and a
 * connect to a loopback port with no listener can connect to itself (TCP
 * simultaneous open), which once passed for a server that had exited. If
 * the server exits (its port taken meanwhile), another port is tried. */
#include <capriccio.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { CLIENTS = 1000 };

extern char **environ;
static int port;
static atomic_int ready;

static redisContext *connect_redis(void)
{
    redisContext *c = redisConnect("127.0.0.1", port);
    CHECK(c != NULL);
    if (c->err)
        fprintf(stderr, "redisConnect: %s\n", c->errstr);
    CHECK_EQ(c->err, 0);
    return c;
}

static void *blpop_timeout(void *arg)
{
    intptr_t id = (intptr_t)arg;
    redisContext *c = connect_redis();
    atomic_fetch_add(&ready, 1);
    redisReply *r = redisCommand(c, "BLPOP capriccio:idle:%d 1", (int)id);
    CHECK(r != NULL);
    CHECK_EQ(r->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
    redisFree(c);
    return NULL;
}

static void *blpop_value(void *arg)
{
    intptr_t id = (intptr_t)arg;
    redisContext *c = connect_redis();
    atomic_fetch_add(&ready, 1);
    redisReply *r = redisCommand(c, "BLPOP capriccio:push:%d 30", (int)id);
    CHECK(r != NULL);
    CHECK_EQ(r->type, REDIS_REPLY_ARRAY);
    CHECK_EQ(r->elements, 2);
    CHECK_EQ(atoi(r->element[1]->str), (int)id * 3);
    freeReplyObject(r);
    redisFree(c);
    return NULL;
}

static void run_all(void *(*fn)(void *), bool push)
{
    static cap_thread_t t[CLIENTS];
    atomic_store(&ready, 0);
    for (intptr_t i = 0; i < CLIENTS; i++)
        CHECK_EQ(cap_thread_create(&t[i], NULL, fn, (void *)i), 0);
    if (push) {
        while (atomic_load(&ready) < CLIENTS)
            cap_sleep_ns(1000000);
        redisContext *c = connect_redis();
        for (int i = 0; i < CLIENTS; i++) {
            redisReply *r = redisCommand(c, "LPUSH capriccio:push:%d %d", i, i * 3);
            CHECK(r != NULL);
            freeReplyObject(r);
        }
        redisFree(c);
    }
    for (int i = 0; i < CLIENTS; i++)
        CHECK_EQ(cap_thread_join(t[i], NULL), 0);
}

static pid_t redis; /* the server while it runs */

/* A failed check exits: the server must not outlive the test. */
static void stop_redis(void)
{
    if (redis > 0) {
        kill(redis, SIGKILL);
        waitpid(redis, NULL, 0);
        redis = 0;
    }
}

/* A loopback port that was free a moment ago. */
static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK_GE(fd, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    CHECK_EQ(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t len = sizeof a;
    CHECK_EQ(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    CHECK_EQ(close(fd), 0);
    return ntohs(a.sin_port);
}

/* Whether the server at `port` answers PING; false once it has exited. */
static bool answers_ping(pid_t pid)
{
    for (int i = 0; i < 500; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) {
            redis = 0; /* reaped */
            return false;
        }
        redisContext *c = redisConnect("127.0.0.1", port);
        if (c != NULL && c->err == 0) {
            redisReply *r = redisCommand(c, "PING");
            bool pong = r != NULL && r->type == REDIS_REPLY_STATUS && strcmp(r->str, "PONG") == 0;
            freeReplyObject(r);
            redisFree(c);
            if (pong)
                return true;
        } else {
            redisFree(c);
        }
        cap_sleep_ns(10000000);
    }
    stop_redis();
    return false;
}

int main(void)
{
    const char *server = "/usr/bin/redis-server";
    if (access(server, X_OK) != 0)
        SKIP("redis-server is not installed");
    CHECK_EQ(atexit(stop_redis), 0);
    pid_t pid = 0;
    bool up = false;
    for (int attempt = 0; attempt < 5 && !up; attempt++) {
        port = free_port();
        char ps[16];
        snprintf(ps, sizeof ps, "%d", port);
        char *args[] = { (char *)server, "--port", ps, "--bind", "127.0.0.1", "--save", "",
                         "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
                         "--maxclients", "4000", NULL };
        if (posix_spawn(&pid, server, NULL, NULL, args, environ) != 0)
            SKIP("cannot start redis-server");
        redis = pid;
        up = answers_ping(pid);
    }
    if (!up)
        SKIP("redis-server did not come up on any of 5 ports");

    uint64_t t0 = cap_now_ns();
    run_all(blpop_timeout, false);
    uint64_t ms = (cap_now_ns() - t0) / 1000000;
    fprintf(stderr, "%d BLPOP timeouts of 1 s took %llu ms\n", CLIENTS, (unsigned long long)ms);
    CHECK_GE(ms, 1000);
    CHECK_LT(ms, 10000); /* one timeout plus set-up, not CLIENTS timeouts */

    run_all(blpop_value, true);

    kill(pid, SIGTERM);
    int status;
    waitpid(pid, &status, 0);
    redis = 0;
    return 0;
}
