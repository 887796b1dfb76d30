/*
 * test_savefile.c - files are written whole or not at all
 * (tg_savefile, tg_safetensors_save): 100 saves killed with SIGKILL at
 * random points and 10 pairs of concurrent saves, each followed by a
 * read that must find one whole checkpoint, the old or a new one; a
 * save into a file size limit; planted symlinks and temporary files
 * that must not be followed or reused; the stream API's commit,
 * discard and failure.
 *
 * Saves run in child processes that start from a parent which never
 * touched tgcore (no threads to fork).  Each checkpoint is checked
 * twice: by parsing the safetensors bytes here (every float equal to
 * the version number, the header's sizes right) and by a child that
 * loads it with tg_safetensors_load.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <check.h>

#include "tg/tg.h"
#include "testlib.h"

#define NAMES 2                  /* tensors per checkpoint */
#define FLOATS (1 << 20)         /* floats per tensor: 8 MiB per file */
#define FILE_BYTES (8 + 128 + (size_t)NAMES * FLOATS * 4)

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* A fresh directory for one test's files. */
static const char *fresh_dir(const char *name)
{
	const char *d = tl_tmp_path(name);
	char cmd[600];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(mkdir(d, 0700), 0);
	return d;
}

static void join(char *out, size_t n, const char *dir, const char *name)
{
	snprintf(out, n, "%s/%s", dir, name);
}

/* ------------------------------------------------------------- saving */

/* Saves version v (every float = v) to path: the child's whole life.
 * Exit status 0 on success, 1 when the save returned an error. */
static int save_version(const char *path, int v)
{
	tg_state *s = tg_state_new();
	int64_t n = FLOATS;
	char name[16];
	int rc = 0;

	for (int i = 0; i < NAMES && s && !rc; i++) {
		tg_tensor *t = tg_full(NULL, TG_FLOAT32, 1, &n, (double)v);

		snprintf(name, sizeof name, "w%d", i);
		rc = tg_state_add(s, name, t);
		tg_tensor_unref(t);
	}
	if (!s || rc || tg_safetensors_save(s, path)) {
		fprintf(stderr, "save %d: %s\n", v, tg_last_error());
		rc = 1;
	}
	tg_state_free(s);
	tg_shutdown();
	return rc;
}

static pid_t spawn_save(const char *path, int v, int gate)
{
	pid_t pid = fork();
	char c;

	ck_assert_int_ge(pid, 0);
	if (pid)
		return pid;
	if (gate >= 0 && read(gate, &c, 1) != 1)
		_exit(2);
	_exit(save_version(path, v));
}

/* 0 when the child exited 0, 1 when it exited 1, -1 when killed. */
static int reap(pid_t pid)
{
	int st;

	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	if (WIFSIGNALED(st))
		return -1;
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) <= 1,
	              "saver: status %d", st);
	return WEXITSTATUS(st);
}

/* ------------------------------------------------------------ reading */

/* The version a checkpoint holds, parsed from its bytes: every float of
 * every tensor must be that one value; -1 (with a message) when the
 * file is not one whole checkpoint. */
static int file_version(const char *path, char *why, size_t n)
{
	FILE *f = fopen(path, "rb");
	unsigned char n8[8];
	uint64_t hl = 0;
	float *buf = NULL;
	int v = -1;
	long size;

	if (!f)
		return snprintf(why, n, "cannot open: %s", strerror(errno)), -1;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	if (fread(n8, 1, 8, f) != 8)
		goto bad;
	for (int k = 0; k < 8; k++)
		hl |= (uint64_t)n8[k] << (8 * k);
	if (hl > 4096 || (size_t)size != 8 + hl + (size_t)NAMES * FLOATS * 4)
		goto bad;
	fseek(f, (long)(8 + hl), SEEK_SET);
	buf = malloc((size_t)NAMES * FLOATS * sizeof *buf);
	ck_assert_ptr_nonnull(buf);
	if (fread(buf, 4, (size_t)NAMES * FLOATS, f) != (size_t)NAMES * FLOATS)
		goto bad;
	v = (int)buf[0];
	for (size_t i = 0; i < (size_t)NAMES * FLOATS; i++)
		if (buf[i] != (float)v) {
			snprintf(why, n, "float %zu is %g, float 0 is %d: a mix",
			         i, buf[i], v);
			v = -1;
			break;
		}
	free(buf);
	fclose(f);
	return v;
bad:
	snprintf(why, n, "%ld bytes, header %llu: not whole", size,
	         (unsigned long long)hl);
	free(buf);
	fclose(f);
	return -1;
}

/* The version tg_safetensors_load reads, in a child: -1 on an error. */
static int load_version(const char *path)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (!pid) {
		tg_state *s = tg_safetensors_load(path, NULL);
		double first = -1, last = -1;
		int ok = s && tg_state_count(s) == NAMES;

		for (int i = 0; ok && i < NAMES; i++) {
			tg_tensor *t = tg_state_tensor(s, i);
			tg_tensor *lo = tg_min(t, NULL, 0, 0);
			tg_tensor *hi = tg_max(t, NULL, 0, 0);
			double a, b;

			ok = !tg_tensor_item(lo, &a) && !tg_tensor_item(hi, &b) &&
			     a == b && (i == 0 || a == first);
			first = i == 0 ? a : first;
			last = b;
			tg_tensor_unref(lo);
			tg_tensor_unref(hi);
		}
		tg_state_free(s);
		tg_shutdown();
		_exit(ok && first == last && first < 250 ? (int)first : 255);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st) == 255 ? -1 : WEXITSTATUS(st);
}

/* Files in dir other than `keep`; each must be a whole checkpoint.  It
 * is removed once checked, so a file left by one kill is counted once,
 * not again after every later kill. */
static int leftovers(const char *dir, const char *keep)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char p[1024], why[128];
	int n = 0;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' || strlen(e->d_name) > 2) {
			if (!strcmp(e->d_name, keep))
				continue;
			join(p, sizeof p, dir, e->d_name);
			ck_assert_msg(file_version(p, why, sizeof why) >= 0,
			              "left behind: %s, %s", p, why);
			ck_assert_int_eq(unlink(p), 0);
			n++;
		}
	closedir(d);
	return n;
}

/* --------------------------------------------------------------- tests */

START_TEST(killed_saves_leave_a_whole_checkpoint)
{
	const char *dir = fresh_dir("killed");
	char path[768], why[128];
	unsigned seed = (unsigned)time(NULL);
	double t0, dur;
	int have, got, left = 0, kept = 0, killed = 0;

	join(path, sizeof path, dir, "ck.st");
	t0 = now_s();
	ck_assert_int_eq(reap(spawn_save(path, 1, -1)), 0);
	dur = now_s() - t0;
	have = 1;
	srand(seed);
	for (int i = 0; i < 100; i++) {
		int v = 2 + i;
		/* a point anywhere in a save, and a few past its end */
		useconds_t at = (useconds_t)(rand() / (RAND_MAX + 1.0) *
		                             dur * 1.1e6);
		pid_t pid = spawn_save(path, v, -1);

		usleep(at);
		kill(pid, SIGKILL);
		got = reap(pid);
		v = file_version(path, why, sizeof why);
		ck_assert_msg(v == have || v == 2 + i, "kill %d at %u us (seed "
		              "%u): version %d, had %d: %s", i, (unsigned)at, seed,
		              v, have, why);
		ck_assert_msg(got != 0 || v == 2 + i, "kill %d: the save "
		              "returned success, the file holds %d", i, v);
		kept += v == have;
		killed += got < 0;
		have = v;
		left += leftovers(dir, "ck.st");
	}
	printf("100 saves of %.0f ms (seed %u): %d killed, %d of them "
	       "before the rename; %d files left behind\n", dur * 1e3, seed,
	       killed, kept, left);
	ck_assert_int_eq(load_version(path), have);
	/* a saver killed between naming its file and the rename, a few
	 * microseconds, leaves a whole file: at most a handful */
	ck_assert_msg(left <= 3, "%d files left behind", left);
}
END_TEST

START_TEST(concurrent_saves_one_wins_whole)
{
	const char *dir = fresh_dir("pairs");
	char path[768], why[128];

	join(path, sizeof path, dir, "ck.st");
	for (int i = 0; i < 10; i++) {
		int gate[2], a = 10 + 2 * i, b = a + 1, ra, rb, v;
		pid_t pa, pb;

		ck_assert_int_eq(pipe(gate), 0);
		pa = spawn_save(path, a, gate[0]);
		pb = spawn_save(path, b, gate[0]);
		close(gate[0]);
		ck_assert_int_eq(write(gate[1], "ab", 2), 2);
		close(gate[1]);
		ra = reap(pa);
		rb = reap(pb);
		v = file_version(path, why, sizeof why);
		ck_assert_msg(v == a || v == b, "pair %d: %s", i, why);
		ck_assert_msg((v == a && ra == 0) || (v == b && rb == 0),
		              "pair %d: the file holds %d, whose save failed",
		              i, v);
		ck_assert_int_eq(load_version(path), v);
		ck_assert_int_eq(leftovers(dir, "ck.st"), 0);
	}
}
END_TEST

/* A save that runs into RLIMIT_FSIZE (EFBIG, as a full disk gives
 * ENOSPC) fails, naming the file, and leaves the old checkpoint. */
START_TEST(failed_write_keeps_the_old_file)
{
	const char *dir = fresh_dir("limit");
	char path[768], why[128];
	pid_t pid;

	join(path, sizeof path, dir, "ck.st");
	ck_assert_int_eq(reap(spawn_save(path, 3, -1)), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		struct rlimit r = { 1 << 20, 1 << 20 };

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &r);
		_exit(save_version(path, 4));
	}
	ck_assert_int_eq(reap(pid), 1);
	ck_assert_int_eq(file_version(path, why, sizeof why), 3);
	ck_assert_int_eq(leftovers(dir, "ck.st"), 0);
}
END_TEST

/* What the old saver wrote to (PATH.tmp), planted as a symlink to a
 * file the saver may write and as a file another user could own: the
 * save must leave both alone and make a file of its own. */
START_TEST(planted_temporaries_are_not_used)
{
	const char *dir = fresh_dir("planted");
	char path[768], tmp[800], victim[768], why[128];
	struct stat st;
	char *text;

	join(path, sizeof path, dir, "ck.st");
	join(victim, sizeof victim, dir, "victim");
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	tl_write_file("unused", "x");  /* TG_TEST_TMP exists */
	{
		FILE *f = fopen(victim, "w");
		ck_assert_ptr_nonnull(f);
		fputs("precious\n", f);
		fclose(f);
	}
	ck_assert_int_eq(symlink(victim, tmp), 0);
	ck_assert_int_eq(reap(spawn_save(path, 5, -1)), 0);
	text = tl_slurp(victim);
	ck_assert_str_eq(text, "precious\n");
	free(text);
	ck_assert_int_eq(lstat(tmp, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(unlink(tmp), 0);
	/* a planted regular file, writable by all */
	{
		int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
		ck_assert_int_ge(fd, 0);
		fchmod(fd, 0666);
		ck_assert_int_eq(write(fd, "junk", 4), 4);
		close(fd);
	}
	ck_assert_int_eq(reap(spawn_save(path, 6, -1)), 0);
	text = tl_slurp(tmp);
	ck_assert_str_eq(text, "junk");
	free(text);
	ck_assert_int_eq(file_version(path, why, sizeof why), 6);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));
	ck_assert_uint_eq(st.st_nlink, 1);
	ck_assert_uint_eq(st.st_uid, getuid());
}
END_TEST

/* ------------------------------------------------------ the stream API */

static char *read_text(const char *path)
{
	char *s = tl_slurp(path);

	ck_assert_msg(s != NULL, "%s is missing", path);
	return s;
}

static void put_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(commit_discard_and_fail)
{
	const char *dir = fresh_dir("api");
	char path[768], *s;
	tg_savefile *sf;
	struct stat st;
	mode_t old = umask(027);

	join(path, sizeof path, dir, "out.txt");
	put_text(path, "old\n");
	/* discard: the old file stays, nothing else is left */
	ck_assert_ptr_nonnull(sf = tg_savefile_open(path));
	fputs("new\n", tg_savefile_stream(sf));
	tg_savefile_discard(sf);
	s = read_text(path);
	ck_assert_str_eq(s, "old\n");
	free(s);
	ck_assert_int_eq(leftovers(dir, "out.txt"), 0);
	/* a caller's failed write: commit refuses */
	ck_assert_ptr_nonnull(sf = tg_savefile_open(path));
	fputs("half", tg_savefile_stream(sf));
	tg_savefile_fail(sf);
	ck_assert_int_eq(tg_savefile_commit(sf), TG_EIO);
	ck_assert_error(path);
	s = read_text(path);
	ck_assert_str_eq(s, "old\n");
	free(s);
	/* commit: the new text, mode 0666 less the umask */
	ck_assert_ptr_nonnull(sf = tg_savefile_open(path));
	fputs("new\n", tg_savefile_stream(sf));
	ck_assert_int_eq(tg_savefile_commit(sf), 0);
	s = read_text(path);
	ck_assert_str_eq(s, "new\n");
	free(s);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0640);
	ck_assert_int_eq(leftovers(dir, "out.txt"), 0);
	umask(old);
	tg_shutdown();
}
END_TEST

START_TEST(bad_paths_are_errors)
{
	const char *dir = fresh_dir("badpath");
	char path[768];

	ck_assert_ptr_null(tg_savefile_open(NULL));
	ck_assert_error("NULL path");
	ck_assert_ptr_null(tg_savefile_open(""));
	ck_assert_error("empty path");
	join(path, sizeof path, dir, "no/such/dir/x.st");
	ck_assert_ptr_null(tg_savefile_open(path));
	ck_assert_error("no/such/dir/x.st: cannot create a file in its "
	                "directory: No such file or directory");
	ck_assert_int_eq(tg_savefile_commit(NULL), TG_EINVAL);
	tg_savefile_discard(NULL);
	ck_assert_ptr_null(tg_savefile_stream(NULL));
	tg_shutdown();
}
END_TEST

static Suite *savefile_suite(void)
{
	Suite *s = suite_create("savefile");
	TCase *tc = tcase_create("savefile");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, commit_discard_and_fail);
	tcase_add_test(tc, bad_paths_are_errors);
	tcase_add_test(tc, planted_temporaries_are_not_used);
	tcase_add_test(tc, failed_write_keeps_the_old_file);
	tcase_add_test(tc, concurrent_saves_one_wins_whole);
	tcase_add_test(tc, killed_saves_leave_a_whole_checkpoint);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tl_run(savefile_suite());
}
