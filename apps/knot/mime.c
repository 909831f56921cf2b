/* SPDX-License-Identifier: MIT */
/*
 * Content-Type by extension (case-insensitive). A short linear table: a
 * cached file looks its type up once, so speed does not matter here.
 */
#include "mime.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *ext, *type;
} types[] = {
    { "html", "text/html; charset=utf-8" },
    { "htm", "text/html; charset=utf-8" },
    { "css", "text/css; charset=utf-8" },
    { "js", "text/javascript; charset=utf-8" },
    { "mjs", "text/javascript; charset=utf-8" },
    { "json", "application/json" },
    { "txt", "text/plain; charset=utf-8" },
    { "md", "text/markdown; charset=utf-8" },
    { "csv", "text/csv; charset=utf-8" },
    { "xml", "application/xml" },
    { "svg", "image/svg+xml" },
    { "png", "image/png" },
    { "jpg", "image/jpeg" },
    { "jpeg", "image/jpeg" },
    { "gif", "image/gif" },
    { "webp", "image/webp" },
    { "avif", "image/avif" },
    { "ico", "image/x-icon" },
    { "pdf", "application/pdf" },
    { "wasm", "application/wasm" },
    { "woff", "font/woff" },
    { "woff2", "font/woff2" },
    { "ttf", "font/ttf" },
    { "otf", "font/otf" },
    { "mp3", "audio/mpeg" },
    { "ogg", "audio/ogg" },
    { "wav", "audio/wav" },
    { "mp4", "video/mp4" },
    { "webm", "video/webm" },
    { "zip", "application/zip" },
    { "gz", "application/gzip" },
    { "tar", "application/x-tar" },
};

const char *mime_type(const char *path)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash + 1 : path, '.');
    if (dot && dot[1])
        for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
            if (!strcasecmp(dot + 1, types[i].ext))
                return types[i].type;
    return "application/octet-stream";
}
