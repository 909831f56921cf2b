/* SPDX-License-Identifier: MIT */
/* HTTP dates (RFC 9110 section 5.6.7), see httpdate.c. */
#ifndef KNOT_HTTPDATE_H
#define KNOT_HTTPDATE_H

#include <stdbool.h>
#include <time.h>

#define HTTPDATE_LEN 29 /* "Sun, 06 Nov 1994 08:49:37 GMT" */

/* Writes the IMF-fixdate of t and a NUL into out[HTTPDATE_LEN + 1]. */
void httpdate_format(time_t t, char *out);
/* Writes the Common Log Format time "10/Oct/2000:13:55:36 +0000" and a NUL
 * into out[CLFDATE_LEN + 1]. */
#define CLFDATE_LEN 26
void httpdate_format_clf(time_t t, char *out);
/* Parses IMF-fixdate, the obsolete RFC 850 form and asctime(); false on
 * anything else (the caller then ignores the header, as the RFC says). */
bool httpdate_parse(const char *s, time_t *out);

#endif /* KNOT_HTTPDATE_H */
