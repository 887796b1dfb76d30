/*
 * paths.c - small helpers for files, directories, the environment and
 * parsing setting values.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core.h"

char *tg_strdup(const char *s, const char *op)
{
	char *d = strdup(s ? s : "");

	if (!d)
		tg_error_oom(op);
	return d;
}

char *tg_path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	memcpy(p, dir, a);
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

int tg_mkdir_p(const char *path)
{
	char *p = tg_strdup(path, "mkdir"), *s;
	int rc = 0;

	if (!p)
		return TG_ENOMEM;
	for (s = p + 1; ; s++) {
		char c = *s;

		if (c != '/' && c != '\0')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) && errno != EEXIST) {
			rc = tg_error(TG_EIO, "mkdir %s: %s", p, strerror(errno));
			break;
		}
		*s = c;
		if (!c)
			break;
	}
	free(p);
	return rc;
}

const char *tg_getenv(const char *name)
{
	return secure_getenv(name);
}

int tg_secure_mode(void)
{
	return getauxval(AT_SECURE) != 0;
}

/* The user's home: $HOME, else the password database's entry (a
 * service started without HOME).  NULL when there is none. */
static char *home_dir(void)
{
	const char *home = tg_getenv("HOME");
	struct passwd pw, *res = NULL;
	char buf[4096];

	if (home && home[0] == '/')
		return tg_strdup(home, "home directory");
	if (getpwuid_r(geteuid(), &pw, buf, sizeof buf, &res) || !res ||
	    !res->pw_dir || res->pw_dir[0] != '/')
		return NULL;
	return tg_strdup(res->pw_dir, "home directory");
}

int tg_user_dir(const char *xdg_var, const char *home_rel, char **out)
{
	const char *xdg = tg_getenv(xdg_var);
	char *home;

	*out = NULL;
	if (tg_secure_mode())  /* setuid: never the invoking user's files */
		return 0;
	if (xdg && xdg[0] == '/')
		return (*out = tg_strdup(xdg, "user directory")) ? 0
		                                                 : TG_ENOMEM;
	if (!(home = home_dir()))
		return 0;
	*out = tg_path_join(home, home_rel);
	free(home);
	return *out ? 0 : tg_error_oom("user directory");
}

int tg_private_path(const char *path, int want_dir, char *why, size_t n)
{
	struct stat st;

	if (stat(path, &st))
		return snprintf(why, n, "%s: %s", path, strerror(errno)), -1;
	if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return snprintf(why, n, "%s is not a %s", path,
		                want_dir ? "directory" : "regular file"), -1;
	if (st.st_uid != geteuid())
		return snprintf(why, n, "%s is owned by uid %u, not by this "
		                "user (uid %u)", path, (unsigned)st.st_uid,
		                (unsigned)geteuid()), -1;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return snprintf(why, n, "%s is writable by %s (mode %04o)",
		                path, st.st_mode & S_IWOTH ? "others" : "its group",
		                (unsigned)(st.st_mode & 07777)), -1;
	return 0;
}

/* The shared rule of tg_trusted_path and tg_trusted_parent. */
static int trusted(const char *path, const struct stat *st, char *why,
                   size_t n)
{
	if (st->st_uid != geteuid() && st->st_uid != 0)
		return snprintf(why, n, "%s is owned by uid %u, neither this "
		                "user (uid %u) nor root", path,
		                (unsigned)st->st_uid, (unsigned)geteuid()), -1;
	if (st->st_mode & S_IWOTH)
		return snprintf(why, n, "%s is writable by others (mode %04o)",
		                path, (unsigned)(st->st_mode & 07777)), -1;
	return 0;
}

int tg_trusted_path(const char *path, char *why, size_t n)
{
	struct stat st;
	int missing;

	if (stat(path, &st)) {
		missing = errno == ENOENT;
		snprintf(why, n, "%s: %s", path, strerror(errno));
		return missing ? 1 : -1;
	}
	return trusted(path, &st, why, n);
}

int tg_trusted_parent(const char *path, char *why, size_t n)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	size_t len = slash ? (size_t)(slash - path) : 1;

	if (len >= sizeof dir)
		return snprintf(why, n, "%s: path too long", path), -1;
	memcpy(dir, slash ? path : ".", len);
	dir[len] = '\0';
	if (slash == path)  /* a file in / */
		snprintf(dir, sizeof dir, "/");
	return tg_trusted_path(dir, why, n);
}

int tg_is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int tg_is_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

const char *tg_file_kind(unsigned mode)
{
	if (S_ISREG(mode))
		return "is a regular file";
	if (S_ISDIR(mode))
		return "is a directory";
	if (S_ISFIFO(mode))
		return "is a FIFO";
	if (S_ISCHR(mode))
		return "is a character device";
	if (S_ISBLK(mode))
		return "is a block device";
	return S_ISSOCK(mode) ? "is a socket" : "is not a regular file";
}

/* Clears O_NONBLOCK, or refuses fd's kind; fd, or -1 with *why. */
static int regular_fd(int fd, const char **why)
{
	struct stat st;
	int fl, e;

	if (fstat(fd, &st) == 0 && !S_ISREG(st.st_mode)) {
		*why = tg_file_kind(st.st_mode);
		close(fd);
		errno = EINVAL;
		return -1;
	}
	fl = fcntl(fd, F_GETFL);
	if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) == 0)
		return fd;
	e = errno;
	*why = strerror(e);
	close(fd);
	errno = e;
	return -1;
}

int tg_open_regular(const char *path, int flags, unsigned mode,
                    const char **why)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		*why = tg_file_kind(st.st_mode);
		errno = EINVAL;
		return -1;
	}
	fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC,
	          (mode_t)mode);
	if (fd < 0) {
		*why = strerror(errno);
		return -1;
	}
	return regular_fd(fd, why);
}

int tg_parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (!s)
		return TG_EINVAL;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s)
		return TG_EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	while (isspace((unsigned char)*end))
		end++;
	if (errno || *end)
		return TG_EINVAL;
	*out = v;
	return 0;
}

int tg_streq_ci(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

int tg_parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "1", "yes", "true", "on" };
	static const char *const no[] = { "0", "no", "false", "off", "" };
	size_t i;

	for (i = 0; s && i < TG_ARRAY_LEN(yes); i++)
		if (tg_streq_ci(s, yes[i]))
			return *out = 1, 0;
	for (i = 0; s && i < TG_ARRAY_LEN(no); i++)
		if (tg_streq_ci(s, no[i]))
			return *out = 0, 0;
	return TG_EINVAL;
}
