/* file.h: writing files without trusting what is already on disk. Every file
 * tk writes (tkc's output, the kernel cache, tkc -run's buffers, dumps) goes
 * through here. Needs only libc, so tkc compiles it in beside libtk. */
#ifndef TK_FILE_H
#define TK_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* One piece of a file written from several buffers. */
typedef struct FilePart {
    const void *data;
    size_t len;
} FilePart;

/* Replaces the name `path` atomically: the parts go to a new temp file in
 * path's folder (a fresh random name, opened O_CREAT|O_EXCL|O_NOFOLLOW, so no
 * planted file or link is ever opened), created with `mode` less the umask,
 * then renamed over path. Whatever was at path (a link included) is replaced,
 * never written through. Returns 0, or an errno value with nothing left. */
int file_replace(const char *path, const FilePart *parts, int nparts, unsigned mode);

/* Writes an output file the way cc -o does: a symlink is followed to its
 * target (a dangling one creates it); a regular or missing target is
 * replaced through file_replace with mode 0666 less the umask; anything else
 * (a FIFO, a device, /dev/stdout) is written through, never replaced.
 * Returns 0 or an errno value. */
int file_write(const char *path, const void *data, size_t len);

/* Whether `name` can be a file name of its own in a folder: not empty, not
 * "." or "..", no '/' and no control bytes. */
bool file_name_ok(const char *name);

#endif
