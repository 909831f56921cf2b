/* SPDX-License-Identifier: MIT */
/* The optional buffered access log, see log.c. */
#ifndef KNOT_LOG_H
#define KNOT_LOG_H

/* Opens (appends to) path; NULL disables logging. Returns 0 or -errno. */
int log_open(const char *path);
/* One Common Log Format line. A no-op when logging is off. */
void log_request(const char *peer, const char *method, const char *target, int minor,
                 int status, long long bytes);
/* Writes out what is buffered (called about once a second and at exit). */
void log_flush(void);
void log_close(void);

#endif /* KNOT_LOG_H */
