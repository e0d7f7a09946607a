/*
 * Folder reading and memory trimming for the server (see src/files/native.ts, which loads this
 * addon when it was built and falls back to plain Node otherwise).
 *
 * readFolderStats(fd): reads the folder held by descriptor `fd` and lstats every entry relative
 * to that same descriptor (fstatat with AT_SYMLINK_NOFOLLOW), on a thread of libuv's pool. Node
 * has no fstatat: the JavaScript path names each entry `/proc/<pid>/fd/<fd>/<name>`, a walk
 * through procfs per entry. The numbers are laid out as src/files/dir-layout.ts says (FIELDS
 * doubles per entry); names come sorted by their bytes, as Node's readdir (libuv's scandir) gives
 * them, joined with NUL.
 *
 * trimMemory(): malloc_trim(0) on glibc, which hands freed arena memory back to the system.
 *
 * renameEntry(from, to, flags): renameat2(2) with RENAME_NOREPLACE or RENAME_EXCHANGE, on a thread
 * of libuv's pool. Node's rename has no flags: a write replacing a file uses the exchange to learn
 * exactly what its rename replaced (src/files/replace.ts).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <node_api.h>
#include <uv.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* Must match FIELDS and the F_* offsets of src/files/dir-layout.ts. */
#define FIELDS 9
#define F_MODE 0
#define F_SIZE 1
#define F_MTIME_S 2
#define F_MTIME_NS 3
#define F_CTIME_S 4
#define F_CTIME_NS 5
#define F_INO_HI 6
#define F_INO_LO 7
#define F_DEV 8

#define GIGA 1000000000LL

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int fd;
  /* errno of the call that failed (0: none), and that call's name. */
  int err;
  const char *syscall;
  char *names;
  size_t names_len;
  double *data;
  size_t count;
  /* Time on the job less the time the thread waited for a core, in ms (see waited_ns). */
  double ms;
} read_job;

#define CHECK(env, call)                                                                       \
  do {                                                                                         \
    if ((call) != napi_ok) {                                                                   \
      napi_throw_error((env), NULL, "fb_native: " #call " failed");                            \
      return NULL;                                                                             \
    }                                                                                          \
  } while (0)

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * GIGA + t.tv_nsec;
}

/*
 * This thread's time spent waiting for a core so far, from the kernel's schedstat (Linux); 0
 * elsewhere. The reader threads subtract it from a job's time for the same reason (AdaptiveIo
 * judges the device by that time; a busy machine must not make a fast disk look slow).
 */
static int64_t waited_ns(void) {
  int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[96];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  unsigned long long run = 0, wait = 0;
  if (sscanf(buf, "%llu %llu", &run, &wait) != 2) return 0;
  return (int64_t)wait;
}

/* strcmp order of the names at two offsets into the names buffer (qsort_r's context). */
static int by_name(const void *a, const void *b, void *names) {
  return strcmp((const char *)names + *(const size_t *)a, (const char *)names + *(const size_t *)b);
}

/* Seconds and nanoseconds as Node splits a BigInt of nanoseconds: both truncated toward zero. */
static void put_time(double *o, int at, const struct timespec *t) {
  /* Not through one count of nanoseconds: that overflows int64 outside 1677-2262, times file
     systems can hold (touch -d 2400-01-01). tv_nsec is 0..1e9-1; toward zero means a negative
     second with a fraction is one second nearer zero and a negative fraction. */
  int64_t sec = (int64_t)t->tv_sec;
  int64_t nsec = (int64_t)t->tv_nsec;
  if (sec < 0 && nsec > 0) {
    sec += 1;
    nsec -= GIGA;
  }
  o[at] = (double)sec;
  o[at + 1] = (double)nsec;
}

static void fail(read_job *job, const char *syscall) {
  job->err = errno ? errno : EIO;
  job->syscall = syscall;
}

static void read_folder(napi_env env, void *arg) {
  (void)env;
  read_job *job = arg;
  int64_t start = now_ns();
  int64_t waited0 = waited_ns();

  /*
   * The pin is an O_PATH descriptor, which getdents refuses: "." opened relative to it is the
   * very folder it holds (no path is resolved again), opened for reading.
   */
  int dfd = openat(job->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) {
    fail(job, "openat");
    return;
  }
  DIR *dir = fdopendir(dfd);
  if (!dir) {
    fail(job, "fdopendir");
    close(dfd);
    return;
  }

  /* The names one after another, each with its NUL; `offsets` says where each starts. */
  size_t cap = 4096, len = 0, n = 0, ocap = 64;
  char *buf = malloc(cap);
  size_t *offsets = malloc(ocap * sizeof *offsets);
  if (!buf || !offsets) {
    errno = ENOMEM;
    fail(job, "malloc");
    goto done;
  }
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(dir);
    if (!d) {
      if (errno) {
        fail(job, "readdir");
        goto done;
      }
      break;
    }
    const char *name = d->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    size_t size = strlen(name) + 1;
    if (len + size > cap) {
      while (len + size > cap) cap *= 2;
      char *grown = realloc(buf, cap);
      if (!grown) {
        errno = ENOMEM;
        fail(job, "malloc");
        goto done;
      }
      buf = grown;
    }
    if (n == ocap) {
      ocap *= 2;
      size_t *grown = realloc(offsets, ocap * sizeof *offsets);
      if (!grown) {
        errno = ENOMEM;
        fail(job, "malloc");
        goto done;
      }
      offsets = grown;
    }
    memcpy(buf + len, name, size);
    offsets[n++] = len;
    len += size;
  }
  qsort_r(offsets, n, sizeof *offsets, by_name, buf);

  /* At least one byte each: malloc(0) may answer NULL, which would read as a failure. */
  job->names = malloc(len > 0 ? len : 1);
  job->data = malloc(n > 0 ? n * FIELDS * sizeof(double) : sizeof(double));
  if (!job->names || !job->data) {
    errno = ENOMEM;
    fail(job, "malloc");
    goto done;
  }
  size_t at = 0;
  for (size_t i = 0; i < n; i++) {
    const char *name = buf + offsets[i];
    size_t size = strlen(name) + 1;
    memcpy(job->names + at, name, size);
    at += size;
    double *o = job->data + i * FIELDS;
    struct stat st;
    if (fstatat(job->fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      /* Vanished since readdir, or unreadable: dir-layout.ts's statInto marks it the same way. */
      for (int f = 0; f < FIELDS; f++) o[f] = 0;
      o[F_MODE] = -1;
      continue;
    }
    o[F_MODE] = (double)st.st_mode;
    o[F_SIZE] = (double)st.st_size;
    put_time(o, F_MTIME_S, &st.st_mtim);
    put_time(o, F_CTIME_S, &st.st_ctim);
    o[F_INO_HI] = (double)((uint64_t)st.st_ino >> 32);
    o[F_INO_LO] = (double)((uint64_t)st.st_ino & 0xffffffffu);
    o[F_DEV] = (double)st.st_dev;
  }
  /* Joined with NUL: the last name has none after it. */
  job->names_len = len > 0 ? len - 1 : 0;
  job->count = n;

done:
  free(buf);
  free(offsets);
  closedir(dir);
  int64_t elapsed = now_ns() - start;
  /* A job under 1 ms is not judged by AdaptiveIo: no second look at schedstat for it. */
  if (elapsed >= 1000000) elapsed -= waited_ns() - waited0;
  job->ms = elapsed > 0 ? (double)elapsed / 1e6 : 0;
}

static void free_bytes(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  free(data);
}

/*
 * An ArrayBuffer over `bytes` (freed with it), or a copy where the runtime refuses buffers
 * allocated outside its heap.
 */
static napi_status take_buffer(napi_env env, void *bytes, size_t length, napi_value *out) {
  napi_status s = napi_create_external_arraybuffer(env, bytes, length, free_bytes, NULL, out);
  if (s == napi_ok) return s;
  void *copy;
  s = napi_create_arraybuffer(env, length, &copy, out);
  if (s == napi_ok && length > 0) memcpy(copy, bytes, length);
  free(bytes);
  return s;
}

/* An Error like the ones Node's fs functions throw: message, code, errno and syscall. */
static napi_value fs_error(napi_env env, int err, const char *syscall) {
  const char *code_name = uv_err_name(-err);
  char message[256];
  snprintf(message, sizeof message, "%s: %s, %s", code_name, uv_strerror(-err), syscall);
  napi_value code, msg, error, errno_value, syscall_value;
  napi_create_string_utf8(env, code_name, NAPI_AUTO_LENGTH, &code);
  napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &msg);
  napi_create_error(env, code, msg, &error);
  napi_create_int32(env, -err, &errno_value);
  napi_set_named_property(env, error, "errno", errno_value);
  napi_create_string_utf8(env, syscall, NAPI_AUTO_LENGTH, &syscall_value);
  napi_set_named_property(env, error, "syscall", syscall_value);
  return error;
}

static napi_value answer(napi_env env, read_job *job) {
  napi_value result, names_buffer, names, data_buffer, data, count, ms;
  size_t count_n = job->count;
  if (napi_create_object(env, &result) != napi_ok) return NULL;
  char *names_bytes = job->names;
  double *data_bytes = job->data;
  job->names = NULL;
  job->data = NULL;
  if (take_buffer(env, names_bytes, job->names_len, &names_buffer) != napi_ok) {
    free(data_bytes);
    return NULL;
  }
  if (take_buffer(env, data_bytes, count_n * FIELDS * sizeof(double), &data_buffer) != napi_ok) return NULL;
  if (napi_create_typedarray(env, napi_uint8_array, job->names_len, names_buffer, 0, &names) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, count_n * FIELDS, data_buffer, 0, &data) != napi_ok ||
      napi_create_double(env, (double)count_n, &count) != napi_ok ||
      napi_create_double(env, job->ms, &ms) != napi_ok ||
      napi_set_named_property(env, result, "names", names) != napi_ok ||
      napi_set_named_property(env, result, "count", count) != napi_ok ||
      napi_set_named_property(env, result, "data", data) != napi_ok ||
      napi_set_named_property(env, result, "ms", ms) != napi_ok)
    return NULL;
  return result;
}

static void read_done(napi_env env, napi_status status, void *arg) {
  read_job *job = arg;
  napi_value value = NULL;
  if (status == napi_ok && job->err == 0) value = answer(env, job);
  if (value) {
    napi_resolve_deferred(env, job->deferred, value);
  } else {
    napi_value error;
    if (job->err != 0) {
      error = fs_error(env, job->err, job->syscall);
    } else {
      napi_value msg;
      napi_create_string_utf8(env, "fb_native: reading a folder failed", NAPI_AUTO_LENGTH, &msg);
      napi_create_error(env, NULL, msg, &error);
    }
    napi_reject_deferred(env, job->deferred, error);
  }
  free(job->names);
  free(job->data);
  napi_delete_async_work(env, job->work);
  free(job);
}

static napi_value read_folder_stats(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  int32_t fd = -1;
  if (argc < 1 || napi_get_value_int32(env, argv[0], &fd) != napi_ok || fd < 0) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "readFolderStats: a descriptor is required");
    return NULL;
  }
  read_job *job = calloc(1, sizeof *job);
  if (!job) {
    napi_throw_error(env, "ENOMEM", "readFolderStats: out of memory");
    return NULL;
  }
  job->fd = fd;
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "fbReadFolderStats", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, read_folder, read_done, job, &job->work) != napi_ok) {
    free(job);
    napi_throw_error(env, NULL, "readFolderStats: could not queue the work");
    return NULL;
  }
  if (napi_queue_async_work(env, job->work) != napi_ok) {
    napi_delete_async_work(env, job->work);
    free(job);
    napi_throw_error(env, NULL, "readFolderStats: could not queue the work");
    return NULL;
  }
  return promise;
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  char *from;
  char *to;
  unsigned int flags;
  int err;
} rename_job;

static void rename_entry_work(napi_env env, void *arg) {
  (void)env;
  rename_job *job = arg;
#ifdef SYS_renameat2
  /* The system call itself: glibc's wrapper is younger than some systems this builds on. */
  if (syscall(SYS_renameat2, AT_FDCWD, job->from, AT_FDCWD, job->to, job->flags) != 0) job->err = errno;
#else
  job->err = ENOSYS;
#endif
}

static void rename_entry_done(napi_env env, napi_status status, void *arg) {
  rename_job *job = arg;
  if (status == napi_ok && job->err == 0) {
    napi_value undefined;
    napi_get_undefined(env, &undefined);
    napi_resolve_deferred(env, job->deferred, undefined);
  } else {
    napi_value error = fs_error(env, job->err ? job->err : EIO, "renameat2");
    if (!error) {
      napi_value msg;
      napi_create_string_utf8(env, "fb_native: a rename failed", NAPI_AUTO_LENGTH, &msg);
      napi_create_error(env, NULL, msg, &error);
    }
    napi_reject_deferred(env, job->deferred, error);
  }
  napi_delete_async_work(env, job->work);
  free(job->from);
  free(job->to);
  free(job);
}

/* A string argument as a new NUL-terminated copy (NULL when it is not a string or memory is short). */
static char *string_arg(napi_env env, napi_value value) {
  size_t length = 0;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char *copy = malloc(length + 1);
  if (!copy) return NULL;
  if (napi_get_value_string_utf8(env, value, copy, length + 1, &length) != napi_ok) {
    free(copy);
    return NULL;
  }
  return copy;
}

static napi_value rename_entry(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t flags = 0;
  if (argc < 3 || napi_get_value_uint32(env, argv[2], &flags) != napi_ok) {
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "renameEntry: two paths and flags are required");
    return NULL;
  }
  rename_job *job = calloc(1, sizeof *job);
  if (job) {
    job->from = string_arg(env, argv[0]);
    job->to = string_arg(env, argv[1]);
    job->flags = flags;
  }
  if (!job || !job->from || !job->to) {
    if (job) {
      free(job->from);
      free(job->to);
      free(job);
    }
    napi_throw_type_error(env, "ERR_INVALID_ARG_TYPE", "renameEntry: two paths and flags are required");
    return NULL;
  }
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, "fbRenameEntry", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, rename_entry_work, rename_entry_done, job, &job->work) !=
          napi_ok) {
    free(job->from);
    free(job->to);
    free(job);
    napi_throw_error(env, NULL, "renameEntry: could not queue the work");
    return NULL;
  }
  if (napi_queue_async_work(env, job->work) != napi_ok) {
    napi_delete_async_work(env, job->work);
    free(job->from);
    free(job->to);
    free(job);
    napi_throw_error(env, NULL, "renameEntry: could not queue the work");
    return NULL;
  }
  return promise;
}

static napi_value trim_memory(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) != 0;
#endif
  napi_value result;
  CHECK(env, napi_get_boolean(env, released, &result));
  return result;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"readFolderStats", NULL, read_folder_stats, NULL, NULL, NULL, napi_default, NULL},
      {"trimMemory", NULL, trim_memory, NULL, NULL, NULL, napi_default, NULL},
      {"renameEntry", NULL, rename_entry, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(env, napi_define_properties(env, exports, sizeof props / sizeof props[0], props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
