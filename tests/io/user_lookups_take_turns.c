/* SPDX-License-Identifier: MIT */
/* Description: user, group, service and protocol lookups through a
 * name-service module that waits for its answer (nss/captest_module.c, as
 * sssd's, systemd's or LDAP's wait for a daemon). glibc's getpwnam,
 * getpwuid, getgrnam, getgrgid, getspnam, getservbyname, getservbyport,
 * getprotobyname and the enumerations (set/get/endpwent, getgrent_r,
 * getspent, getservent) hold a lock of glibc's own across the module's
 * call; a module's read parked the user thread with that lock held, and a
 * second thread of the worker calling the same function then slept the
 * worker in the kernel on it: the parked holder could never run again
 * (this test hung on one worker). Now user threads take turns before
 * glibc's lock: sixteen threads at once each get their own entry, the
 * worker's other threads run while the module waits, ERANGE and "not
 * found" come back as glibc gives them, and a cancel while the module
 * waits acts once the lookup returned (glibc's lock is not left held).
 * Every form runs in place, but on the offload pool while nscd's socket
 * exists (glibc asks nscd through its internal calls): a stand-in's
 * socket, in a mount namespace of the test's own (mount_ns.h), sends them
 * there. */
#include <arpa/inet.h>
#include <grp.h>
#include <netdb.h>
#include <nss.h>
#include <pwd.h>
#include <shadow.h>
#include <sys/un.h>

#include "io/io_util.h"
#include "mount_ns.h"

/* The module's. */
void captest_nss_answer_from(int fd);
pid_t captest_nss_last_tid(void);

enum { THREADS = 16, KINDS = 8 };

static atomic_int calling, done;
static char got[THREADS][64]; /* each thread's entry name, "-" if none */
static unsigned got_id[THREADS];

/* Thread i looks up the entry of kind i % KINDS, copying what it got
 * before the next answer is given (the entries are glibc's static ones). */
static void *looker(void *arg)
{
    int i = (int)(intptr_t)arg;
    char key[16];
    snprintf(key, sizeof key, "k%d", i);
    const char *name = NULL;
    unsigned id = 0;
    atomic_fetch_add(&calling, 1);
    switch (i % KINDS) {
    case 0: {
        struct passwd *p = getpwnam(key);
        if (p != NULL)
            name = p->pw_name, id = p->pw_uid;
        break;
    }
    case 1: {
        struct passwd *p = getpwuid(100 + i);
        if (p != NULL)
            name = p->pw_name, id = p->pw_uid;
        break;
    }
    case 2: {
        struct group *g = getgrnam(key);
        if (g != NULL)
            name = g->gr_name, id = g->gr_gid;
        break;
    }
    case 3: {
        struct group *g = getgrgid(100 + i);
        if (g != NULL)
            name = g->gr_name, id = g->gr_gid;
        break;
    }
    case 4: {
        struct spwd *s = getspnam(key);
        if (s != NULL)
            name = s->sp_namp, id = 1;
        break;
    }
    case 5: {
        struct servent *s = getservbyname(key, "tcp");
        if (s != NULL)
            name = s->s_name, id = ntohs(s->s_port);
        break;
    }
    case 6: {
        struct servent *s = getservbyport(htons(100 + i), "udp");
        if (s != NULL && strcmp(s->s_proto, "udp") == 0)
            name = s->s_name, id = ntohs(s->s_port);
        break;
    }
    default: {
        struct protoent *p = getprotobyname(key);
        if (p != NULL)
            name = p->p_name, id = (unsigned)p->p_proto;
        break;
    }
    }
    snprintf(got[i], sizeof got[i], "%s", name != NULL ? name : "-");
    got_id[i] = id;
    atomic_fetch_add(&done, 1);
    return NULL;
}

static int answer_w;

/* Gives one answer and waits until *count reaches want. */
static void answer(char c, atomic_int *count, int want)
{
    CHECK_EQ(write(answer_w, &c, 1), 1);
    for (int tries = 0; atomic_load(count) < want; tries++) {
        CHECK_LT(tries, 10000);
        cap_sleep_ns(1000000);
    }
}

/* The ticker moves while every looker waits for the module (given up to
 * 2 s: on two workers it may wait for a CPU on a loaded host). */
static void others_run_meanwhile(void)
{
    long t0 = ticker_ticks();
    for (int tries = 0; tries < 100 && ticker_ticks() == t0; tries++)
        cap_sleep_ns(20000000);
    CHECK_GT(ticker_ticks(), t0);
}

static void check_by_key(void)
{
    for (int i = 0; i < THREADS; i++) {
        char want[32];
        unsigned want_id;
        switch (i % KINDS) {
        case 1:
            snprintf(want, sizeof want, "u%d", 100 + i);
            want_id = 100 + i;
            break;
        case 3:
            snprintf(want, sizeof want, "g%d", 100 + i);
            want_id = 100 + i;
            break;
        case 6:
            snprintf(want, sizeof want, "p%d", 100 + i);
            want_id = 100 + i;
            break;
        case 7:
            snprintf(want, sizeof want, "k%d", i);
            want_id = 50 + 'k';
            break;
        default:
            snprintf(want, sizeof want, "k%d", i);
            want_id = i % KINDS == 4 ? 1 : 5000 + 'k';
            break;
        }
        if (strcmp(got[i], want) != 0)
            fprintf(stderr, "thread %d got %s, want %s\n", i, got[i], want);
        CHECK(strcmp(got[i], want) == 0);
        CHECK_EQ(got_id[i], want_id);
    }
}

static atomic_int enumerated;

static void *enumerate_users(void *arg)
{
    (void)arg;
    setpwent();
    struct passwd *p;
    while ((p = getpwent()) != NULL) {
        char want[16];
        snprintf(want, sizeof want, "e%d", atomic_load(&enumerated));
        CHECK(strcmp(p->pw_name, want) == 0);
        atomic_fetch_add(&enumerated, 1);
    }
    endpwent();
    atomic_fetch_add(&enumerated, 100); /* the end */
    return NULL;
}

static void *enumerate_groups(void *arg)
{
    (void)arg;
    setgrent();
    struct group g, *res;
    char buf[256];
    while (getgrent_r(&g, buf, sizeof buf, &res) == 0 && res != NULL) {
        CHECK_EQ(g.gr_gid, (gid_t)(7000 + atomic_load(&enumerated)));
        CHECK(g.gr_mem[0] != NULL && strcmp(g.gr_mem[0], g.gr_name) == 0);
        atomic_fetch_add(&enumerated, 1);
    }
    endgrent();
    atomic_fetch_add(&enumerated, 100);
    return NULL;
}

static void *enumerate_services(void *arg)
{
    (void)arg;
    setservent(1);
    struct servent *s;
    while ((s = getservent()) != NULL) {
        CHECK_EQ(ntohs(s->s_port), 7000 + atomic_load(&enumerated));
        atomic_fetch_add(&enumerated, 1);
    }
    endservent();
    atomic_fetch_add(&enumerated, 100);
    return NULL;
}

static void *enumerate_shadow(void *arg)
{
    (void)arg;
    setspent();
    struct spwd *s;
    while ((s = getspent()) != NULL) {
        CHECK(strcmp(s->sp_pwdp, "!") == 0);
        atomic_fetch_add(&enumerated, 1);
    }
    endspent();
    atomic_fetch_add(&enumerated, 100);
    return NULL;
}

/* Runs fn, answering "y" `entries` times and then "n". */
static void enumeration(void *(*fn)(void *), int entries)
{
    atomic_store(&enumerated, 0);
    cap_thread_t t = spawn(fn, NULL);
    others_run_meanwhile();
    for (int k = 1; k <= entries; k++)
        answer('y', &enumerated, k);
    answer('n', &enumerated, entries + 100);
    join(t);
}

static atomic_int lookup_returned;

static void *cancelled_looker(void *arg)
{
    (void)arg;
    struct passwd *p = getpwnam("cancelled");
    CHECK(p != NULL && strcmp(p->pw_name, "cancelled") == 0);
    atomic_store(&lookup_returned, 1);
    cap_testcancel();
    return NULL;
}

/* A cancel while the module waits acts after the lookup (which holds
 * glibc's lock) returns; the next lookup goes on. */
static void cancel_waits_for_lookup(void)
{
    cap_thread_t t = spawn(cancelled_looker, NULL);
    others_run_meanwhile();
    CHECK_EQ(cap_thread_cancel(t), 0);
    others_run_meanwhile();
    CHECK_EQ(atomic_load(&lookup_returned), 0);
    CHECK_EQ(write(answer_w, "y", 1), 1);
    CHECK(join(t) == CAP_CANCELED);
    CHECK_EQ(atomic_load(&lookup_returned), 1);
    CHECK_EQ(write(answer_w, "y", 1), 1);
    struct passwd *p = getpwnam("after");
    CHECK(p != NULL && strcmp(p->pw_name, "after") == 0);
}

static atomic_int reentrant_done;

static void *reentrant_looker(void *arg)
{
    int i = (int)(intptr_t)arg;
    char key[16], buf[256];
    snprintf(key, sizeof key, "r%d", i);
    struct passwd pw, *res = NULL;
    CHECK_EQ(getpwnam_r(key, &pw, buf, sizeof buf, &res), 0);
    CHECK(res == &pw);
    CHECK(strcmp(pw.pw_name, key) == 0);
    atomic_fetch_add(&reentrant_done, 1);
    return NULL;
}

/* Whether a lookup ran in place, on the caller's kernel thread (its
 * answer is there before it asks: the module does not wait): getpwnam_r,
 * or with_lock getpwnam, which holds glibc's lock. */
static bool ran_in_place(bool with_lock)
{
    char buf[256];
    struct passwd pw, *res;
    CHECK_EQ(write(answer_w, "y", 1), 1);
    pid_t mine = gettid();
    if (with_lock) {
        res = getpwnam("where");
    } else {
        CHECK_EQ(getpwnam_r("where", &pw, buf, sizeof buf, &res), 0);
        CHECK(res == &pw);
    }
    CHECK(res != NULL);
    return captest_nss_last_tid() == mine;
}

/* A stand-in for nscd: it takes each connection and closes it, which
 * sends glibc on to the modules. */
static void *nscd_stand_in(void *arg)
{
    int listener = (int)(intptr_t)arg;
    for (;;) {
        int c = accept(listener, NULL, NULL);
        if (c >= 0)
            close(c);
    }
    return NULL;
}

/* Lookups go to the pool once nscd's socket is there. */
static void nscd_sends_lookups_to_pool(void)
{
    CHECK(ran_in_place(false));
    CHECK(ran_in_place(true));
    CHECK_EQ(mkdir("/var/run/nscd", 0755), 0);
    int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(listener >= 0);
    struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/var/run/nscd/socket" };
    CHECK_EQ(bind(listener, (struct sockaddr *)&a, sizeof a), 0);
    CHECK_EQ(listen(listener, 16), 0);
    cap_thread_t nscd = spawn(nscd_stand_in, (void *)(intptr_t)listener);
    int tries = 0;
    while (ran_in_place(false)) { /* the socket is looked for once a second */
        CHECK_LT(++tries, 500);
        cap_sleep_ns(10000000);
    }
    CHECK(!ran_in_place(false));
    CHECK(!ran_in_place(true));
    CHECK_EQ(cap_thread_cancel(nscd), 0);
    CHECK(join(nscd) == CAP_CANCELED);
    close(listener);
}

int main(int argc, char **argv)
{
    (void)argc;
    mount_ns_enter(argv, (const char *const[]){ "/var/run", NULL });
    CHECK_EQ(__nss_configure_lookup("passwd", "captest"), 0);
    CHECK_EQ(__nss_configure_lookup("group", "captest"), 0);
    CHECK_EQ(__nss_configure_lookup("shadow", "captest"), 0);
    CHECK_EQ(__nss_configure_lookup("services", "captest"), 0);
    CHECK_EQ(__nss_configure_lookup("protocols", "captest"), 0);
    int p[2];
    CHECK_EQ(pipe(p), 0);
    captest_nss_answer_from(p[0]);
    answer_w = p[1];
    ticker_start(1000000);

    /* By key, sixteen at once, two of each function. */
    cap_thread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        t[i] = spawn(looker, (void *)(intptr_t)i);
    while (atomic_load(&calling) < THREADS)
        cap_sleep_ns(1000000);
    others_run_meanwhile();
    for (int k = 1; k <= THREADS; k++)
        answer('y', &done, k);
    for (int i = 0; i < THREADS; i++)
        join(t[i]);
    check_by_key();

    /* Not found: NULL; the _r form 0 with no entry. */
    CHECK_EQ(write(answer_w, "n", 1), 1);
    CHECK(getpwnam("nobody-here") == NULL);
    struct passwd pw, *res = &pw;
    char small[4];
    CHECK_EQ(write(answer_w, "n", 1), 1);
    CHECK_EQ(getpwuid_r(1, &pw, small, sizeof small, &res), 0);
    CHECK(res == NULL);
    /* A buffer too small for the entry: ERANGE, as glibc gives it. */
    CHECK_EQ(write(answer_w, "y", 1), 1);
    CHECK_EQ(getpwnam_r("longer-than-four", &pw, small, sizeof small, &res), ERANGE);
    CHECK(res == NULL);

    /* Enumerations hold glibc's lock across the module too. */
    enumeration(enumerate_users, 3);
    enumeration(enumerate_groups, 2);
    enumeration(enumerate_shadow, 1);
    enumeration(enumerate_services, 2);

    /* The _r forms, four at once; getgrouplist. */
    cap_thread_t r[4];
    for (int i = 0; i < 4; i++)
        r[i] = spawn(reentrant_looker, (void *)(intptr_t)i);
    others_run_meanwhile();
    for (int k = 1; k <= 4; k++)
        answer('y', &reentrant_done, k);
    for (int i = 0; i < 4; i++)
        join(r[i]);
    gid_t groups[8];
    int ngroups = 8;
    CHECK_EQ(write(answer_w, "y", 1), 1);
    CHECK_EQ(getgrouplist("k0", 100, groups, &ngroups), 2);
    CHECK_EQ(ngroups, 2);
    CHECK_EQ(groups[0], 100);
    CHECK_EQ(groups[1], 6100);

    cancel_waits_for_lookup();
    nscd_sends_lookups_to_pool();
    ticker_stop();
    return 0;
}
