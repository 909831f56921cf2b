/* SPDX-License-Identifier: MIT */
/* Description: stdio on pipes, sockets and commands behaves as glibc's
 * does: lines written with fprintf through a line-buffered stream come
 * out of fgets in another thread in order; 256 KiB written with fwrite
 * arrive byte for byte through fread; getline reads a 100 KiB line;
 * fscanf reads numbers; ungetc pushes back; fgets at EOF returns NULL
 * with feof set, and clearerr resets it; a write to a pipe whose reader
 * is gone fails with EOF, ferror set and errno EPIPE (SIGPIPE ignored);
 * fdopen of a socket works both ways; popen reads a command's output and
 * pclose returns its exit status. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

enum { LINES = 2000, BIG = 256 * 1024, LONG_LINE = 100 * 1024 };

static void *write_lines(void *arg)
{
    FILE *w = arg;
    EXPECT_EQ(setvbuf(w, NULL, _IOLBF, 0), 0);
    for (int i = 0; i < LINES; i++)
        EXPECT(fprintf(w, "line %d of %d\n", i, LINES) > 0);
    EXPECT_EQ(fclose(w), 0);
    return NULL;
}

static void lines_through_a_pipe(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    FILE *r = fdopen(p[0], "r"), *w = fdopen(p[1], "w");
    EXPECT(r != NULL && w != NULL);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, write_lines, w), 0);
    char buf[64], want[64];
    for (int i = 0; i < LINES; i++) {
        EXPECT(fgets(buf, sizeof buf, r) != NULL);
        snprintf(want, sizeof want, "line %d of %d\n", i, LINES);
        EXPECT_EQ(strcmp(buf, want), 0);
    }
    EXPECT(fgets(buf, sizeof buf, r) == NULL);
    EXPECT(feof(r));
    EXPECT(!ferror(r));
    clearerr(r);
    EXPECT(!feof(r));
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(fclose(r), 0);
}

static unsigned char pattern(size_t i)
{
    return (unsigned char)(i * 7 + i / 251);
}

static void *write_big(void *arg)
{
    FILE *w = arg;
    unsigned char *b = malloc(BIG);
    EXPECT(b != NULL);
    for (size_t i = 0; i < BIG; i++)
        b[i] = pattern(i);
    EXPECT_EQ(fwrite(b, 1, BIG / 2, w), BIG / 2);
    EXPECT_EQ(fwrite(b + BIG / 2, 1, BIG / 2, w), BIG / 2);
    EXPECT_EQ(fclose(w), 0);
    free(b);
    return NULL;
}

static void bytes_through_a_pipe(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    FILE *r = fdopen(p[0], "r"), *w = fdopen(p[1], "w");
    EXPECT(r != NULL && w != NULL);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, write_big, w), 0);
    unsigned char *b = malloc(BIG + 1);
    EXPECT(b != NULL);
    EXPECT_EQ(fread(b, 1, BIG + 1, r), BIG); /* short at EOF */
    EXPECT(feof(r));
    for (size_t i = 0; i < BIG; i++)
        if (b[i] != pattern(i))
            EXPECT_EQ(i, (size_t)-1);
    free(b);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(fclose(r), 0);
}

static void *write_long_line_and_numbers(void *arg)
{
    FILE *w = arg;
    for (int i = 0; i < LONG_LINE; i++)
        EXPECT(fputc('a' + i % 26, w) != EOF);
    EXPECT(fputc('\n', w) != EOF);
    EXPECT(fprintf(w, "12 -34 5.5 word\n") > 0);
    EXPECT_EQ(fclose(w), 0);
    return NULL;
}

static void getline_fscanf_ungetc(void)
{
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    FILE *r = fdopen(p[0], "r"), *w = fdopen(p[1], "w");
    EXPECT(r != NULL && w != NULL);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, write_long_line_and_numbers, w), 0);
    char *line = NULL;
    size_t cap = 0;
    EXPECT_EQ(getline(&line, &cap, r), LONG_LINE + 1);
    for (int i = 0; i < LONG_LINE; i++)
        if (line[i] != 'a' + i % 26)
            EXPECT_EQ(i, -1);
    free(line);
    int c = fgetc(r);
    EXPECT_EQ(c, '1');
    EXPECT_EQ(ungetc(c, r), '1');
    int a = 0, b = 0;
    double d = 0;
    char word[16];
    EXPECT_EQ(fscanf(r, "%d %d %lf %15s", &a, &b, &d, word), 4);
    EXPECT_EQ(a, 12);
    EXPECT_EQ(b, -34);
    EXPECT(d == 5.5);
    EXPECT_EQ(strcmp(word, "word"), 0);
    EXPECT_EQ(fscanf(r, "%d", &a), EOF);
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(fclose(r), 0);
}

static void write_to_a_closed_pipe(void)
{
    EXPECT(signal(SIGPIPE, SIG_IGN) != SIG_ERR);
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    EXPECT_EQ(close(p[0]), 0);
    FILE *w = fdopen(p[1], "w");
    EXPECT(w != NULL);
    EXPECT(fputs("lost\n", w) != EOF); /* buffered */
    errno = 0;
    EXPECT_EQ(fflush(w), EOF);
    EXPECT_EQ(errno, EPIPE);
    EXPECT(ferror(w));
    fclose(w); /* (glibc dropped the failed buffer: 0; not checked) */
}

static void *echo_back(void *arg)
{
    FILE *s = fdopen(*(int *)arg, "r+");
    EXPECT(s != NULL);
    char buf[64];
    while (fgets(buf, sizeof buf, s) != NULL) {
        EXPECT(fputs(buf, s) != EOF);
        EXPECT_EQ(fflush(s), 0);
    }
    EXPECT_EQ(fclose(s), 0);
    return NULL;
}

static void socket_streams(void)
{
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pthread_t t;
    EXPECT_EQ(pthread_create(&t, NULL, echo_back, &sv[1]), 0);
    FILE *s = fdopen(sv[0], "r+");
    EXPECT(s != NULL);
    char buf[64];
    for (int i = 0; i < 200; i++) {
        EXPECT(fprintf(s, "ping %d\n", i) > 0);
        EXPECT_EQ(fflush(s), 0);
        EXPECT(fgets(buf, sizeof buf, s) != NULL);
        char want[32];
        snprintf(want, sizeof want, "ping %d\n", i);
        EXPECT_EQ(strcmp(buf, want), 0);
    }
    EXPECT_EQ(shutdown(sv[0], SHUT_WR), 0);
    EXPECT(fgets(buf, sizeof buf, s) == NULL); /* the echo side closed */
    EXPECT_EQ(pthread_join(t, NULL), 0);
    EXPECT_EQ(fclose(s), 0);
}

static void commands(void)
{
    FILE *p = popen("echo hello; echo world", "r");
    EXPECT(p != NULL);
    char buf[32];
    EXPECT(fgets(buf, sizeof buf, p) != NULL);
    EXPECT_EQ(strcmp(buf, "hello\n"), 0);
    EXPECT(fgets(buf, sizeof buf, p) != NULL);
    EXPECT_EQ(strcmp(buf, "world\n"), 0);
    EXPECT(fgets(buf, sizeof buf, p) == NULL);
    int st = pclose(p);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    p = popen("cat > /dev/null; exit 3", "w");
    EXPECT(p != NULL);
    for (int i = 0; i < 1000; i++)
        EXPECT(fprintf(p, "data %d\n", i) > 0);
    st = pclose(p);
    EXPECT(WIFEXITED(st) && WEXITSTATUS(st) == 3);
}

int main(void)
{
    lines_through_a_pipe();
    bytes_through_a_pipe();
    getline_fscanf_ungetc();
    write_to_a_closed_pipe();
    socket_streams();
    commands();
    EXPECT_EQ(fflush(NULL), 0);
    return 0;
}
