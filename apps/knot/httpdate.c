/* SPDX-License-Identifier: MIT */
/*
 * HTTP dates, always in GMT. Conversions are done arithmetically on days
 * since the epoch rather than through gmtime_r/timegm: they need no locale,
 * no time-zone lock, and are the same under any thread package.
 */
#include "httpdate.h"

#include <stdint.h>
#include <string.h>

static const char wdays[7][4] = { "Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed" }; /* from 1970-01-01 */
static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                    "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

/* Days since 1970-01-01 of a proleptic Gregorian date; month 1..12. Counts
 * from a March-based year so the leap day falls at the end of it. */
static int64_t days_from_date(int64_t y, int m, int d)
{
    if (m <= 2)
        y--;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;                           /* 0..399 */
    int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;    /* 0..146096 */
    return era * 146097 + doe - 719468;
}

static void date_from_days(int64_t z, int64_t *y, int *m, int *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    *d = (int)(doy - (153 * mp + 2) / 5 + 1);
    *m = (int)(mp < 10 ? mp + 3 : mp - 9);
    *y = yoe + era * 400 + (*m <= 2);
}

static void put2(char *p, int v)
{
    p[0] = (char)('0' + v / 10);
    p[1] = (char)('0' + v % 10);
}

void httpdate_format(time_t t, char *out)
{
    int64_t days = t / 86400, secs = t % 86400;
    if (secs < 0) {
        secs += 86400;
        days--;
    }
    int64_t y;
    int m, d;
    date_from_days(days, &y, &m, &d);
    if (y < 0 || y > 9999)
        y = 1970, m = 1, d = 1, days = 0, secs = 0;
    memcpy(out, wdays[((days % 7) + 7) % 7], 3);
    memcpy(out + 3, ", ", 2);
    put2(out + 5, d);
    out[7] = ' ';
    memcpy(out + 8, months[m - 1], 3);
    out[11] = ' ';
    put2(out + 12, (int)(y / 100));
    put2(out + 14, (int)(y % 100));
    out[16] = ' ';
    put2(out + 17, (int)(secs / 3600));
    out[19] = ':';
    put2(out + 20, (int)(secs / 60 % 60));
    out[22] = ':';
    put2(out + 23, (int)(secs % 60));
    memcpy(out + 25, " GMT", 5);
}

void httpdate_format_clf(time_t t, char *out)
{
    char imf[HTTPDATE_LEN + 1];
    httpdate_format(t, imf); /* "Sun, 06 Nov 1994 08:49:37 GMT" */
    memcpy(out, imf + 5, 2);       /* 06 */
    out[2] = '/';
    memcpy(out + 3, imf + 8, 3);   /* Nov */
    out[6] = '/';
    memcpy(out + 7, imf + 12, 4);  /* 1994 */
    out[11] = ':';
    memcpy(out + 12, imf + 17, 8); /* 08:49:37 */
    memcpy(out + 20, " +0000", 7);
}

/* Reads exactly n digits. */
static bool digits(const char **s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*s)[i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *s += n;
    *out = v;
    return true;
}

static bool lit(const char **s, const char *want)
{
    size_t n = strlen(want);
    if (strncmp(*s, want, n))
        return false;
    *s += n;
    return true;
}

static bool month(const char **s, int *out)
{
    for (int i = 0; i < 12; i++)
        if (!strncmp(*s, months[i], 3)) {
            *s += 3;
            *out = i + 1;
            return true;
        }
    return false;
}

static bool clock_hms(const char **s, int *h, int *mi, int *se)
{
    return digits(s, 2, h) && lit(s, ":") && digits(s, 2, mi) && lit(s, ":") && digits(s, 2, se);
}

bool httpdate_parse(const char *s, time_t *out)
{
    int y, m, d, h, mi, se;
    const char *comma = strchr(s, ',');
    if (comma && comma - s == 3) {
        /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
        s += 4;
        if (!(lit(&s, " ") && digits(&s, 2, &d) && lit(&s, " ") && month(&s, &m) && lit(&s, " ") &&
              digits(&s, 4, &y) && lit(&s, " ") && clock_hms(&s, &h, &mi, &se) && lit(&s, " GMT")))
            return false;
    } else if (comma) {
        /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT; two-digit years below 70
         * are read as 20xx (RFC 9110 says: within 50 years of now). */
        s = comma + 1;
        if (!(lit(&s, " ") && digits(&s, 2, &d) && lit(&s, "-") && month(&s, &m) && lit(&s, "-") &&
              digits(&s, 2, &y) && lit(&s, " ") && clock_hms(&s, &h, &mi, &se) && lit(&s, " GMT")))
            return false;
        y += y < 70 ? 2000 : 1900;
    } else {
        /* asctime: Sun Nov  6 08:49:37 1994 */
        if (strlen(s) < 4)
            return false;
        s += 4;
        if (!(month(&s, &m) && lit(&s, " ")))
            return false;
        if (*s == ' ') {
            s++;
            if (!digits(&s, 1, &d))
                return false;
        } else if (!digits(&s, 2, &d)) {
            return false;
        }
        if (!(lit(&s, " ") && clock_hms(&s, &h, &mi, &se) && lit(&s, " ") && digits(&s, 4, &y)))
            return false;
    }
    if (*s || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return false;
    *out = (time_t)(days_from_date(y, m, d) * 86400 + h * 3600 + mi * 60 + se);
    return true;
}
