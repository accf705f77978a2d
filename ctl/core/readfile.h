/* SPDX-License-Identifier: MIT */
/* Files a build tree names, read by cachectl (doctor's build files, the
 * headers and records measure --explain reads): opened only when they are
 * regular files, each read once a run if asked, and all of them within one
 * budget in bytes and files, so a hostile tree (a device, a FIFO, a 1 GiB
 * sparse file included four times) costs seconds and is said, never acted
 * on. The one loop in the client that reads such files. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The longest line readfile_line returns whole by default; a longer one is
 * cut there (its rest skipped, counted as read). */
#define READFILE_LINE_MAX 65536

/* What a run may read and what it left unread. */
typedef struct ReadBudget {
        uint64_t bytes_left, files_left;
        bool once;              /* a file (by device and inode) is read at most once */
        uint64_t files_unread;  /* refused or cut: the budget was reached */
        uint64_t not_regular;   /* refused: a FIFO, device, socket or directory */
        char *first_unread;     /* the first of those, as named, or NULL */
        char *first_not_regular;
        struct ReadSeen {
                dev_t dev;
                ino_t ino;
        } *seen;                /* once: the files opened */
        size_t n_seen, cap_seen;
} ReadBudget;

/* A budget of bytes and files; once: each file read at most once. */
void readfile_budget_init(ReadBudget *b, uint64_t bytes, uint64_t files, bool once);
void readfile_budget_done(ReadBudget *b);
/* Whether anything was left unread because the budget ran out. */
bool readfile_budget_reached(const ReadBudget *b);

/* Opens path (absolute or relative to the current directory; symlinks
 * followed) for reading if it is a regular file, without ever opening
 * anything else: an O_PATH fd is checked with fstat, and only a regular
 * file is then opened for reading, through /proc/self/fd: the same inode,
 * whatever is renamed over the name meanwhile. Opening a device can act (a
 * tape rewinds, a watchdog arms) and a FIFO blocks. Without /proc nothing
 * is opened (-ENOENT): opening by the name again would race. *ret_st (may
 * be NULL) gets its stat. Returns the fd (O_CLOEXEC, O_NONBLOCK), -EINVAL
 * when it is no regular file, or -errno. */
int readfile_open(const char *path, struct stat *ret_st);

/* "not a regular file" for -EINVAL, else strerror(-r). */
const char *readfile_strerror(int r);

/* One file being read, within its budget. */
typedef struct ReadFile {
        int fd;
        ReadBudget *budget;     /* borrowed; NULL: none */
        char *path;             /* as named, for what the budget says was not read */
        uint64_t left;          /* bytes this file may still give */
        struct stat st;         /* as opened */
        uint64_t pos;           /* bytes read so far */
        char *buf;              /* readfile_line's buffer */
        size_t start, end, cap;
        bool eof;               /* nothing more: the end, an error, or a limit reached */
        bool skipping;          /* the rest of a line cut short is being skipped */
} ReadFile;

/* Opens path (readfile_open) to read at most max_bytes of it and of b (may
 * be NULL). Returns 0, -EINVAL no regular file (counted in b), -EALREADY
 * read already this run (b->once), -ENOSPC b is spent (counted), or
 * -errno; *f is then empty. */
int readfile_begin(ReadFile *f, ReadBudget *b, const char *path, uint64_t max_bytes);

/* The next line, without its newline and NUL-terminated, at most line_max
 * (0: READFILE_LINE_MAX) bytes, a longer one cut and its rest skipped;
 * *ret_len (may be NULL) its length. NULL at the end, or when the file's
 * limit or the budget is reached (said in the budget). The line is f's
 * until the next call. */
char *readfile_line(ReadFile *f, size_t line_max, size_t *ret_len);

/* Up to n bytes (not mixed with readfile_line). Returns the count, 0 at
 * the end or a limit (said in the budget), or -errno. */
ssize_t readfile_read(ReadFile *f, void *buf, size_t n);

/* Whether f stopped before its end for its limit or its budget's. */
bool readfile_cut(const ReadFile *f);

/* Closes f; what it did not read for a limit is counted in its budget. */
void readfile_end(ReadFile *f);

/* The whole of path, at most max_bytes, NUL-terminated in a new buffer
 * (*ret, free it; *ret_len its length). Returns 0, 1 when the file was
 * longer (cut: what was read is returned), or readfile_begin's -errno. */
int readfile_all(ReadBudget *b, const char *path, uint64_t max_bytes, char **ret, size_t *ret_len);
