/* SPDX-License-Identifier: MIT */
/* Description: user, group and shadow lookups in the machine's own
 * databases answer as glibc's: root by name and by id (passwd and
 * group), its shadow entry when run as root, "not found" (NULL; 0 with no
 * entry from the _r forms), ERANGE for a buffer too small, the
 * enumerations (getpwent and getpwent_r list the same names, root among
 * them; getgrent finds group 0), getgrouplist with its count, and eight
 * threads looking up at once, 200 times each. The library makes user
 * threads take turns before the forms that hold a lock of glibc's across
 * a module that may wait (intercept/nss.c). */
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <shadow.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

enum { THREADS = 8, ROUNDS = 200 };

static void *looker(void *arg)
{
    (void)arg;
    for (int r = 0; r < ROUNDS; r++) {
        char buf[1024];
        struct passwd pw, *pres = NULL;
        EXPECT_EQ(getpwnam_r("root", &pw, buf, sizeof buf, &pres), 0);
        EXPECT(pres == &pw);
        EXPECT_EQ(pw.pw_uid, 0);
        struct group gr, *gres = NULL;
        EXPECT_EQ(getgrgid_r(0, &gr, buf, sizeof buf, &gres), 0);
        EXPECT(gres == &gr);
        EXPECT(strcmp(gr.gr_name, "root") == 0);
    }
    return NULL;
}

/* The names getpwent lists, or with_r: those getpwent_r lists. */
static int list_users(char names[][64], int room, int with_r)
{
    int n = 0;
    setpwent();
    for (;;) {
        struct passwd *p, pw;
        char buf[2048];
        if (with_r) {
            int rc = getpwent_r(&pw, buf, sizeof buf, &p);
            EXPECT(rc == 0 || rc == ENOENT);
            if (rc != 0)
                p = NULL;
        } else {
            p = getpwent();
        }
        if (p == NULL)
            break;
        EXPECT(n < room);
        snprintf(names[n++], 64, "%s", p->pw_name);
    }
    endpwent();
    return n;
}

int main(void)
{
    struct passwd *p = getpwnam("root");
    EXPECT(p != NULL);
    EXPECT_EQ(p->pw_uid, 0);
    EXPECT(strcmp(p->pw_dir, "/root") == 0);
    p = getpwuid(0);
    EXPECT(p != NULL);
    EXPECT(strcmp(p->pw_name, "root") == 0);
    struct group *g = getgrnam("root");
    EXPECT(g != NULL);
    EXPECT_EQ(g->gr_gid, 0);
    g = getgrgid(0);
    EXPECT(g != NULL);
    EXPECT(strcmp(g->gr_name, "root") == 0);
    if (geteuid() == 0) {
        struct spwd *s = getspnam("root");
        EXPECT(s != NULL);
        EXPECT(strcmp(s->sp_namp, "root") == 0);
    }

    /* Not found; a buffer too small. */
    EXPECT(getpwnam("no-such-user-of-capriccio") == NULL);
    EXPECT(getgrnam("no-such-group-of-capriccio") == NULL);
    char small[4], buf[1024];
    struct passwd pw, *pres = &pw;
    EXPECT_EQ(getpwnam_r("no-such-user-of-capriccio", &pw, buf, sizeof buf, &pres), 0);
    EXPECT(pres == NULL);
    pres = &pw;
    EXPECT_EQ(getpwnam_r("root", &pw, small, sizeof small, &pres), ERANGE);
    EXPECT(pres == NULL);
    struct group gr, *gres = &gr;
    EXPECT_EQ(getgrnam_r("root", &gr, small, sizeof small, &gres), ERANGE);
    EXPECT(gres == NULL);

    /* Enumerations. */
    static char a[4096][64], b[4096][64];
    int na = list_users(a, 4096, 0), nb = list_users(b, 4096, 1);
    EXPECT_EQ(na, nb);
    int root_seen = 0;
    for (int i = 0; i < na; i++) {
        EXPECT(strcmp(a[i], b[i]) == 0);
        root_seen |= strcmp(a[i], "root") == 0;
    }
    EXPECT(root_seen);
    int group0_seen = 0;
    setgrent();
    while ((g = getgrent()) != NULL)
        group0_seen |= g->gr_gid == 0;
    endgrent();
    EXPECT(group0_seen);

    /* getgrouplist: the count, and room for none. */
    gid_t groups[64];
    int ngroups = 64;
    int n = getgrouplist("root", 0, groups, &ngroups);
    EXPECT(n >= 1);
    EXPECT_EQ(ngroups, n);
    EXPECT_EQ(groups[0], 0);
    int none = 0;
    EXPECT_EQ(getgrouplist("root", 0, groups, &none), -1);
    EXPECT_EQ(none, n);

    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_create(&t[i], NULL, looker, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        EXPECT_EQ(pthread_join(t[i], NULL), 0);
    return 0;
}
