/* SPDX-License-Identifier: MIT */
/* Description: on a stream open for reading and writing ("r+" over a
 * socket), a read that must refill the buffer first writes out what the
 * stream's earlier output left buffered, as glibc's switch from writing to
 * reading does: the request reaches the peer, which answers. It did not
 * (fgets, fgetc, getline, fread, fscanf and fgetws all waited for the
 * answer to a request still in the buffer: both sides hung). */
#include <wchar.h>

#include "io/io_util.h"

static int sv[2];

static void *peer(void *arg)
{
    (void)arg;
    char buf[64];
    size_t got = 0;
    while (got == 0 || buf[got - 1] != '\n') {
        ssize_t r = read(sv[1], buf + got, sizeof buf - got);
        CHECK_GT(r, 0);
        got += (size_t)r;
    }
    CHECK_EQ(got, 5);
    CHECK_EQ(memcmp(buf, "ping\n", 5), 0);
    CHECK_EQ(write(sv[1], "pong\n", 5), 5);
    return NULL;
}

enum how { FGETS, FGETC, GETLINE, FREAD, FSCANF, FGETWS, HOWS };

static void round_trip(enum how how)
{
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cap_thread_t t = spawn(peer, NULL);
    FILE *f = fdopen(sv[0], "r+");
    CHECK(f != NULL);
    if (how == FGETWS)
        CHECK_GE(fputws(L"ping\n", f), 0); /* fully buffered: stays in the buffer */
    else
        CHECK_GE(fputs("ping\n", f), 0);
    char line[64] = "";
    switch (how) {
    case FGETS:
        CHECK(fgets(line, sizeof line, f) != NULL);
        break;
    case FGETC:
        line[0] = (char)fgetc(f);
        break;
    case GETLINE: {
        char *l = NULL;
        size_t n = 0;
        CHECK_EQ(getline(&l, &n, f), 5);
        memcpy(line, l, 5);
        free(l);
        break;
    }
    case FREAD:
        CHECK_EQ(fread(line, 1, 5, f), 5);
        break;
    case FSCANF:
        CHECK_EQ(fscanf(f, "%63s", line), 1);
        break;
    case FGETWS: {
        wchar_t w[64];
        CHECK(fgetws(w, 64, f) != NULL);
        CHECK(wcscmp(w, L"pong\n") == 0);
        memcpy(line, "pong", 4);
        break;
    }
    default:
        CHECK(!"unknown case");
    }
    CHECK_EQ(line[0], 'p');
    if (how != FGETC)
        CHECK_EQ(memcmp(line, "pong", 4), 0);
    join(t);
    CHECK_EQ(fclose(f), 0);
    CHECK_EQ(close(sv[1]), 0);
}

int main(void)
{
    for (int how = 0; how < HOWS; how++)
        round_trip((enum how)how);
    return 0;
}
