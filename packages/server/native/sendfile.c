/*
 * sendfile(2) for downloads: the kernel copies a file's cached pages straight into a socket, so
 * a byte costs one copy instead of two (pread into a buffer, then write from it) and no
 * JavaScript runs per chunk. Node has no sendfile to a socket; see docs/performance.md.
 *
 * One call sends at most `count` bytes and stops early, without error, when the socket stays full
 * (EAGAIN) for `waitMs`: the caller then waits for it to drain through Node's own write queue. It
 * runs on a libuv pool thread, so reading a file that is not cached blocks no JavaScript.
 */
#define NAPI_VERSION 8
#include <errno.h>
#include <fcntl.h>
#include <node_api.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  int out_fd; /* a dup of the socket, see start() */
  int in_fd;
  int64_t offset;
  int64_t count;
  int64_t sent;
  int wait_ms;
  int err;
} job_t;

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void execute(napi_env env, void *data) {
  job_t *j = data;
  off_t off = (off_t)j->offset;
  int64_t deadline = now_ms() + j->wait_ms;
  while (j->sent < j->count) {
    ssize_t n = sendfile(j->out_fd, j->in_fd, &off, (size_t)(j->count - j->sent));
    if (n > 0) {
      j->sent += n;
      continue;
    }
    if (n == 0) break; /* the file ended early */
    if (errno == EINTR) continue;
    if (errno != EAGAIN) {
      j->err = errno;
      break;
    }
    /* Full: a fast client drains it within moments, and waiting here keeps it fed without a
       round trip through the event loop; a slow one gets the socket back to Node's queue. */
    int64_t left = deadline - now_ms();
    if (left <= 0) break;
    struct pollfd p = {.fd = j->out_fd, .events = POLLOUT};
    int r = poll(&p, 1, (int)left);
    if (r < 0 && errno != EINTR) {
      j->err = errno;
      break;
    }
    if (r == 0) break;
  }
  close(j->out_fd);
}

static void complete(napi_env env, napi_status status, void *data) {
  job_t *j = data;
  napi_value result;
  if (j->err) {
    napi_create_int32(env, -j->err, &result);
  } else {
    napi_create_int64(env, j->sent, &result);
  }
  /* Resolves with the bytes sent, or with -errno (the caller names it). */
  napi_resolve_deferred(env, j->deferred, result);
  napi_delete_async_work(env, j->work);
  free(j);
}

static napi_value fail(napi_env env, const char *message) {
  napi_throw_error(env, NULL, message);
  return NULL;
}

/* send(socketFd, fileFd, offset, count, waitMs) -> Promise<number> */
static napi_value start(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], name, promise;
  int out_fd, in_fd, wait_ms;
  int64_t offset, count;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5 ||
      napi_get_value_int32(env, argv[0], &out_fd) != napi_ok ||
      napi_get_value_int32(env, argv[1], &in_fd) != napi_ok ||
      napi_get_value_int64(env, argv[2], &offset) != napi_ok ||
      napi_get_value_int64(env, argv[3], &count) != napi_ok ||
      napi_get_value_int32(env, argv[4], &wait_ms) != napi_ok || offset < 0 || count < 0 ||
      wait_ms < 0)
    return fail(env, "send(socketFd, fileFd, offset, count, waitMs) takes five non-negative integers");
  /* A blocking socket would hold the pool thread until a slow client took everything. */
  int flags = fcntl(out_fd, F_GETFL);
  if (flags < 0 || !(flags & O_NONBLOCK)) return fail(env, "the socket is not non-blocking");
  job_t *j = calloc(1, sizeof(job_t));
  if (!j) return fail(env, "out of memory");
  /* Our own descriptor of the socket: if Node closes its one meanwhile (the client went away),
     the number cannot be reused for another file or connection while this call writes to it. */
  j->out_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 0);
  if (j->out_fd < 0) {
    free(j);
    return fail(env, "could not duplicate the socket descriptor");
  }
  j->in_fd = in_fd;
  j->offset = offset;
  j->count = count;
  j->wait_ms = wait_ms;
  napi_create_promise(env, &j->deferred, &promise);
  napi_create_string_utf8(env, "filebrowser:sendfile", NAPI_AUTO_LENGTH, &name);
  napi_create_async_work(env, NULL, name, execute, complete, j, &j->work);
  napi_queue_async_work(env, j->work);
  return promise;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  napi_create_function(env, "send", NAPI_AUTO_LENGTH, start, NULL, &fn);
  napi_set_named_property(env, exports, "send", fn);
  return exports;
}
