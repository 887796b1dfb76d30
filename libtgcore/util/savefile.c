/*
 * savefile.c - files written whole or not at all (tg_savefile_open).
 *
 * The data goes to a new file in the target's directory, which is
 * flushed to disk and then renamed over the target, and the directory
 * is flushed after the rename, so a reader, a crash or a power cut sees
 * the old file or the new one, never a mix.  Concurrent savers each
 * write their own file; the last rename wins whole.
 *
 * The new file is anonymous while it is written (O_TMPFILE): a saver
 * killed half-way leaves nothing behind.  It gets a name only at the
 * end, a random one that linkat() refuses to take if it exists, so a
 * symlink or file planted in a shared directory is never followed or
 * written.  Where O_TMPFILE or /proc is missing, the file is made with
 * mkostemps (O_CREAT | O_EXCL: the same guarantees, except that a
 * killed saver leaves its temporary file).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

#define OP "savefile"

struct tg_savefile {
	FILE *f;
	char *path;   /* the target */
	char *dir;    /* its directory */
	char *tmp;    /* the temporary name; NULL while anonymous */
	int failed;   /* a write failed: commit refuses */
};

static int io_error(const char *path, const char *what, int err)
{
	return tg_error(TG_EIO, "%s: %s: %s", path, what, strerror(err));
}

/* ".name.XXXXXXXXXXXX.tmp" beside the target, X random (from the
 * kernel, so two processes never race to one name); NULL on OOM. */
static char *temp_name(const tg_savefile *sf, int fill)
{
	static const char hex[] = "0123456789abcdef";
	const char *slash = strrchr(sf->path, '/');
	const char *base = slash ? slash + 1 : sf->path;
	size_t n = strlen(sf->path) + 32, d = (size_t)(base - sf->path);
	unsigned char r[12] = { 0 };
	char *t = malloc(n), *x;

	if (!t)
		return NULL;
	snprintf(t, n, "%.*s.%s.XXXXXXXXXXXX.tmp", (int)d, sf->path, base);
	if (!fill)
		return t;
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
		for (size_t i = 0; i < sizeof r; i++)
			r[i] = (unsigned char)rand();
	x = strstr(t + d, "XXXXXXXXXXXX");
	for (size_t i = 0; i < sizeof r; i++)
		x[i] = hex[r[i] & 15];
	return t;
}

/* The anonymous file, or -1 (with errno) where the file system or the
 * kernel has no O_TMPFILE, or /proc is not there to name it later. */
static int open_anonymous(const char *dir)
{
#ifdef O_TMPFILE
	if (access("/proc/self/fd", X_OK) == 0)
		return open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#endif
	(void)dir;
	errno = EOPNOTSUPP;
	return -1;
}

/* The umask, which the anonymous file and fopen's files get and
 * mkostemps's 0600 file must be given: read from /proc (asking umask()
 * would change it for every thread for a moment); 022 without /proc. */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	unsigned m = 022;
	char line[128];

	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "Umask: %o", &m) == 1)
			break;
	if (f)
		fclose(f);
	return (mode_t)m;
}

/* The named temporary file, made with O_EXCL. */
static int open_named(tg_savefile *sf)
{
	int fd;

	if (!(sf->tmp = temp_name(sf, 0)))
		return -1;
	fd = mkostemps(sf->tmp, 4, O_CLOEXEC);
	if (fd >= 0 && fchmod(fd, 0666 & ~current_umask())) {
		int err = errno;

		close(fd);
		unlink(sf->tmp);
		errno = err;
		fd = -1;
	}
	if (fd < 0) {
		free(sf->tmp);
		sf->tmp = NULL;
	}
	return fd;
}

static int open_temp(tg_savefile *sf)
{
	int fd = open_anonymous(sf->dir), err;

	if (fd >= 0)
		return fd;
	err = errno;
	if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL &&
	    err != ENOENT) {
		io_error(sf->path, "cannot create a file in its directory", err);
		return -1;
	}
	if ((fd = open_named(sf)) < 0)
		io_error(sf->path, "cannot create a file in its directory",
		         errno);
	return fd;
}

static void savefile_free(tg_savefile *sf)
{
	if (sf->f)
		fclose(sf->f);
	if (sf->tmp)
		unlink(sf->tmp);
	free(sf->tmp);
	free(sf->dir);
	free(sf->path);
	free(sf);
}

tg_savefile *tg_savefile_open(const char *path)
{
	tg_savefile *sf;
	char *d;
	int fd;

	if (!path || !path[0])
		return tg_error(TG_EINVAL, OP ": %s path", path ? "empty"
		                : "NULL"), NULL;
	if (!(sf = calloc(1, sizeof *sf)) || !(sf->path = strdup(path)) ||
	    !(d = strdup(path))) {
		if (sf)
			free(sf->path);
		free(sf);
		return tg_error_oom(OP), NULL;
	}
	sf->dir = strdup(dirname(d));
	free(d);
	if (!sf->dir) {
		tg_error_oom(OP);
		savefile_free(sf);
		return NULL;
	}
	if ((fd = open_temp(sf)) < 0) {
		savefile_free(sf);
		return NULL;
	}
	if (!(sf->f = fdopen(fd, "wb"))) {
		close(fd);
		tg_error_oom(OP);
		savefile_free(sf);
		return NULL;
	}
	return sf;
}

FILE *tg_savefile_stream(tg_savefile *sf)
{
	return sf ? sf->f : NULL;
}

void tg_savefile_fail(tg_savefile *sf)
{
	if (sf)
		sf->failed = 1;
}

/* Gives the anonymous file its random name (retrying on a name that
 * is taken: linkat never replaces a file or follows a symlink). */
static int link_anonymous(tg_savefile *sf, int fd)
{
	char proc[64];

	snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
	for (int i = 0; i < 16; i++) {
		if (!(sf->tmp = temp_name(sf, 1)))
			return tg_error_oom(OP);
		if (!linkat(AT_FDCWD, proc, AT_FDCWD, sf->tmp,
		            AT_SYMLINK_FOLLOW))
			return 0;
		free(sf->tmp);
		sf->tmp = NULL;
		if (errno != EEXIST)
			break;
	}
	return io_error(sf->path, "cannot name the new file", errno);
}

/* Makes the rename itself durable; file systems that cannot sync a
 * directory say EINVAL, which is no error here. */
static int sync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return 0;
	if (fsync(fd) && errno != EINVAL && errno != EROFS)
		rc = errno;
	close(fd);
	return rc;
}

/* Flushes and syncs the data; the stream is closed either way. */
static int finish_data(tg_savefile *sf)
{
	int fd = fileno(sf->f), rc = 0;

	if (sf->failed || ferror(sf->f))
		rc = io_error(sf->path, "writing the new file failed",
		              errno ? errno : EIO);
	else if (fflush(sf->f) || fsync(fd))
		rc = io_error(sf->path, "writing the new file failed", errno);
	else if (!sf->tmp)
		rc = link_anonymous(sf, fd);
	if (fclose(sf->f) && !rc)
		rc = io_error(sf->path, "writing the new file failed", errno);
	sf->f = NULL;
	return rc;
}

int tg_savefile_commit(tg_savefile *sf)
{
	int rc, err;

	if (!sf)
		return tg_error(TG_EINVAL, OP ": NULL file");
	if (!(rc = finish_data(sf)) && rename(sf->tmp, sf->path))
		rc = io_error(sf->path, "cannot replace it", errno);
	if (!rc) {
		free(sf->tmp);
		sf->tmp = NULL;
		if ((err = sync_dir(sf->dir)))
			rc = io_error(sf->path, "syncing its directory", err);
	}
	savefile_free(sf);
	return rc;
}

void tg_savefile_discard(tg_savefile *sf)
{
	if (sf)
		savefile_free(sf);
}
