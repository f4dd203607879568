/*
 * udp_batch: a UDP socket read and written in batches (recvmmsg/sendmmsg), for the DNS server's
 * queries (docs/decisions/0015-dns-udp-in-batches.md).
 *
 * The socket is watched by a uv_poll on node's own loop (the main thread; no thread of its own).
 * When it is readable, up to BATCH datagrams are read with one recvmmsg into a buffer that
 * JavaScript owns (slot i at i * IN_SLOT), their lengths into `meta`, and JavaScript is called
 * once with their count. It writes each reply into the out buffer (slot i at i * OUT_SLOT) and its
 * length into meta; on return every reply is sent with one sendmmsg to the address its query came
 * from. A reply that does not fit its slot, or one made later, goes out with sendTo.
 *
 * meta, an Int32Array of BATCH * 4: [i*4 + 0] the datagram's length, [i*4 + 1] 1 when it must not
 * be answered (cut, which a UDP datagram never is at 64 KiB, or from port 0), [i*4 + 2] the reply's
 * length (0: none), set by JavaScript.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <node_api.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#define BATCH 32
#define IN_SLOT 65536
#define OUT_SLOT 4096

typedef struct {
  int fd;
  int closed;    /* 1: close() called; 2: the poll handle closed as well */
  int collected; /* the external was collected */
  int sent, to_send; /* the batch's replies sent so far, and to send */
  uv_poll_t poll;
  napi_env env;
  napi_ref callback;
  napi_ref self;
  napi_ref in_ref, out_ref, meta_ref;
  napi_async_context context;
  unsigned char *in;
  unsigned char *out;
  int32_t *meta;
  struct mmsghdr rmsg[BATCH];
  struct iovec riov[BATCH];
  struct sockaddr_storage from[BATCH];
  struct mmsghdr smsg[BATCH];
  struct iovec siov[BATCH];
} udp_batch;

#define CHECK(env, call)                                                 \
  do {                                                                   \
    if ((call) != napi_ok) {                                             \
      napi_throw_error((env), NULL, "udp_batch: " #call " failed");      \
      return NULL;                                                       \
    }                                                                    \
  } while (0)

static napi_value throw_errno(napi_env env, int err, const char *what) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s %s", what, strerror(err));
  napi_throw_error(env, uv_err_name(-err), msg);
  return NULL;
}

static int port_of(const struct sockaddr_storage *sa) {
  if (sa->ss_family == AF_INET) return ntohs(((const struct sockaddr_in *)sa)->sin_port);
  if (sa->ss_family == AF_INET6) return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
  return 0;
}

static int to_sockaddr(int family, const char *address, int port, struct sockaddr_storage *sa, socklen_t *len) {
  memset(sa, 0, sizeof *sa);
  if (family == 6) {
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
    s6->sin6_family = AF_INET6;
    s6->sin6_port = htons((uint16_t)port);
    if (inet_pton(AF_INET6, address, &s6->sin6_addr) != 1) return -1;
    *len = sizeof *s6;
  } else {
    struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
    s4->sin_family = AF_INET;
    s4->sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, address, &s4->sin_addr) != 1) return -1;
    *len = sizeof *s4;
  }
  return 0;
}

static void on_event(uv_poll_t *handle, int status, int events);

/* Replies of the batch wait for room in the send buffer (smsg[sent..to_send)). */
static int pending(const udp_batch *u) { return u->sent < u->to_send; }

/*
 * Sends the replies of the batch not sent yet: 0 when all went, -1 when the socket's send buffer is
 * full. Then the caller waits until it is writable and reads no new queries meanwhile (their slots
 * still hold these replies): the kernel's receive buffer takes up the slack, and past it queries
 * are dropped, as under any overload. A reply the kernel refuses otherwise is dropped, as dgram
 * drops send errors.
 */
static int flush(udp_batch *u) {
  while (pending(u)) {
    int r = sendmmsg(u->fd, u->smsg + u->sent, (unsigned)(u->to_send - u->sent), MSG_DONTWAIT);
    if (r > 0) u->sent += r;
    else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -1;
    else if (!(r < 0 && errno == EINTR)) u->sent++;
  }
  u->sent = u->to_send = 0;
  return 0;
}

static void send_replies(udp_batch *u, int n) {
  int k = 0;
  for (int i = 0; i < n; i++) {
    int len = u->meta[i * 4 + 2];
    if (len <= 0 || len > OUT_SLOT) continue;
    u->siov[k].iov_base = u->out + (size_t)i * OUT_SLOT;
    u->siov[k].iov_len = (size_t)len;
    memset(&u->smsg[k].msg_hdr, 0, sizeof u->smsg[k].msg_hdr);
    u->smsg[k].msg_hdr.msg_name = &u->from[i];
    u->smsg[k].msg_hdr.msg_namelen = u->rmsg[i].msg_hdr.msg_namelen;
    u->smsg[k].msg_hdr.msg_iov = &u->siov[k];
    u->smsg[k].msg_hdr.msg_iovlen = 1;
    k++;
  }
  u->sent = 0;
  u->to_send = k;
  if (flush(u) < 0) uv_poll_start(&u->poll, UV_WRITABLE, on_event);
}

static void call_js(udp_batch *u, int n);
static void on_env_cleanup(void *arg);

static void on_event(uv_poll_t *handle, int status, int events) {
  udp_batch *u = (udp_batch *)handle->data;
  if (u->closed) return;
  if (status < 0) {
    /* libuv stopped the poll (an error on the socket): JavaScript hears it (a negative count), the
     * socket's pending error is taken (reading it clears it), and reading goes on. */
    int err = 0;
    socklen_t len = sizeof err;
    (void)getsockopt(u->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    call_js(u, status);
    if (!u->closed) uv_poll_start(&u->poll, pending(u) ? UV_WRITABLE : UV_READABLE, on_event);
    return;
  }
  if (pending(u)) {
    if ((events & UV_WRITABLE) && flush(u) == 0) uv_poll_start(&u->poll, UV_READABLE, on_event);
    return;
  }
  for (int i = 0; i < BATCH; i++) {
    u->riov[i].iov_base = u->in + (size_t)i * IN_SLOT;
    u->riov[i].iov_len = IN_SLOT;
    memset(&u->rmsg[i].msg_hdr, 0, sizeof u->rmsg[i].msg_hdr);
    u->rmsg[i].msg_hdr.msg_name = &u->from[i];
    u->rmsg[i].msg_hdr.msg_namelen = sizeof u->from[i];
    u->rmsg[i].msg_hdr.msg_iov = &u->riov[i];
    u->rmsg[i].msg_hdr.msg_iovlen = 1;
  }
  int n = recvmmsg(u->fd, u->rmsg, BATCH, MSG_DONTWAIT, NULL);
  if (n <= 0) return;
  for (int i = 0; i < n; i++) {
    u->meta[i * 4 + 0] = (int32_t)u->rmsg[i].msg_len;
    /* Nothing can be sent to port 0: such a datagram is forged or broken; JavaScript sees it as cut. */
    u->meta[i * 4 + 1] = (u->rmsg[i].msg_hdr.msg_flags & MSG_TRUNC) || port_of(&u->from[i]) == 0 ? 1 : 0;
    u->meta[i * 4 + 2] = 0;
  }

  call_js(u, n);
  if (!u->closed) send_replies(u, n);
}

/* Calls onBatch(n): n datagrams in the slots, or a negative libuv error code. */
static void call_js(udp_batch *u, int n) {
  napi_env env = u->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) != napi_ok) return;
  napi_value fn, recv, argv[1], result;
  napi_get_reference_value(env, u->callback, &fn);
  napi_get_global(env, &recv);
  napi_create_int32(env, n, &argv[0]);
  napi_status st = napi_make_callback(env, u->context, recv, fn, 1, argv, &result);
  if (st == napi_pending_exception) {
    napi_value err;
    napi_get_and_clear_last_exception(env, &err);
    napi_fatal_exception(env, err);
  }
  napi_close_handle_scope(env, scope);
}

static udp_batch *unwrap(napi_env env, napi_value v) {
  void *p = NULL;
  if (napi_get_value_external(env, v, &p) != napi_ok || p == NULL) {
    napi_throw_type_error(env, NULL, "udp_batch: not a socket");
    return NULL;
  }
  return (udp_batch *)p;
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  udp_batch *u = (udp_batch *)data;
  /* The external is held until close(); the struct goes once the poll handle is closed too. */
  u->collected = 1;
  if (u->closed == 2) free(u);
}

static int buffer_of(napi_env env, napi_value v, void **data, size_t *len) {
  bool is;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return -1;
  napi_typedarray_type type;
  size_t length, offset;
  napi_value ab;
  if (napi_get_typedarray_info(env, v, &type, &length, data, &ab, &offset) != napi_ok) return -1;
  size_t unit = type == napi_int32_array ? 4 : 1;
  *len = length * unit;
  return 0;
}

/* open(family 4|6, address, port, in: Uint8Array, out: Uint8Array, meta: Int32Array, onBatch) → socket */
static napi_value open_socket(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value argv[7];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 7) {
    napi_throw_type_error(env, NULL, "udp_batch.open: 7 arguments");
    return NULL;
  }
  int32_t family, port;
  char address[64];
  size_t alen;
  CHECK(env, napi_get_value_int32(env, argv[0], &family));
  CHECK(env, napi_get_value_string_utf8(env, argv[1], address, sizeof address, &alen));
  CHECK(env, napi_get_value_int32(env, argv[2], &port));
  void *in, *out, *meta;
  size_t in_len, out_len, meta_len;
  if (buffer_of(env, argv[3], &in, &in_len) || in_len < (size_t)BATCH * IN_SLOT ||
      buffer_of(env, argv[4], &out, &out_len) || out_len < (size_t)BATCH * OUT_SLOT ||
      buffer_of(env, argv[5], &meta, &meta_len) || meta_len < (size_t)BATCH * 4 * 4) {
    napi_throw_range_error(env, NULL, "udp_batch.open: buffers too small");
    return NULL;
  }

  struct sockaddr_storage sa;
  socklen_t salen;
  if (to_sockaddr(family, address, port, &sa, &salen) < 0) return throw_errno(env, EINVAL, "bind");
  int fd = socket(family == 6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return throw_errno(env, errno, "socket");
  if (bind(fd, (struct sockaddr *)&sa, salen) < 0) {
    int err = errno;
    close(fd);
    return throw_errno(env, err, "bind");
  }

  udp_batch *u = calloc(1, sizeof *u);
  if (!u) {
    close(fd);
    return throw_errno(env, ENOMEM, "open");
  }
  u->fd = fd;
  u->env = env;
  u->in = in;
  u->out = out;
  u->meta = meta;
  napi_create_reference(env, argv[6], 1, &u->callback);
  napi_create_reference(env, argv[3], 1, &u->in_ref);
  napi_create_reference(env, argv[4], 1, &u->out_ref);
  napi_create_reference(env, argv[5], 1, &u->meta_ref);
  napi_value name;
  napi_create_string_utf8(env, "hostplane:udp-batch", NAPI_AUTO_LENGTH, &name);
  napi_value resource;
  napi_create_object(env, &resource);
  napi_async_init(env, resource, name, &u->context);

  uv_loop_t *loop;
  napi_get_uv_event_loop(env, &loop);
  uv_poll_init(loop, &u->poll, fd);
  u->poll.data = u;
  uv_poll_start(&u->poll, UV_READABLE, on_event);
  napi_add_env_cleanup_hook(env, on_env_cleanup, u);

  napi_value ext;
  CHECK(env, napi_create_external(env, u, finalize, NULL, &ext));
  napi_create_reference(env, ext, 1, &u->self);
  return ext;
}

/* port(socket) → the bound port */
static napi_value bound_port(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], r;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_batch *u = unwrap(env, argv[0]);
  if (!u) return NULL;
  struct sockaddr_storage sa;
  socklen_t len = sizeof sa;
  if (getsockname(u->fd, (struct sockaddr *)&sa, &len) < 0) return throw_errno(env, errno, "getsockname");
  napi_create_int32(env, port_of(&sa), &r);
  return r;
}

/*
 * peer(socket, slot) → [address, port, sockaddr] of the datagram in that slot of the batch being
 * handled; sockaddr (a copy of the kernel's) is what sendTo takes, so a reply made later goes
 * exactly where the query came from (an IPv6 scope included).
 */
static napi_value peer(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2], r, a, p, b;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_batch *u = unwrap(env, argv[0]);
  if (!u) return NULL;
  int32_t i;
  CHECK(env, napi_get_value_int32(env, argv[1], &i));
  if (i < 0 || i >= BATCH) {
    napi_throw_range_error(env, NULL, "udp_batch.peer: no such slot");
    return NULL;
  }
  char text[INET6_ADDRSTRLEN + IF_NAMESIZE + 1] = "";
  const struct sockaddr_storage *sa = &u->from[i];
  char with_scope[INET6_ADDRSTRLEN + IF_NAMESIZE + 1];
  if (sa->ss_family == AF_INET6) {
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
    inet_ntop(AF_INET6, &s6->sin6_addr, text, sizeof text);
    /* A link-local sender keeps its interface, as dgram writes it (fe80::1%eth0). */
    if (s6->sin6_scope_id) {
      char ifname[IF_NAMESIZE];
      if (if_indextoname(s6->sin6_scope_id, ifname)) snprintf(with_scope, sizeof with_scope, "%s%%%s", text, ifname);
      else snprintf(with_scope, sizeof with_scope, "%s%%%u", text, (unsigned)s6->sin6_scope_id);
      snprintf(text, sizeof text, "%s", with_scope);
    }
  } else {
    inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, text, sizeof text);
  }
  void *copy;
  socklen_t len = u->rmsg[i].msg_hdr.msg_namelen;
  if (len > sizeof *sa) len = sizeof *sa;
  CHECK(env, napi_create_buffer_copy(env, len, sa, &copy, &b));
  napi_create_array_with_length(env, 3, &r);
  napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &a);
  napi_create_int32(env, port_of(sa), &p);
  napi_set_element(env, r, 0, a);
  napi_set_element(env, r, 1, p);
  napi_set_element(env, r, 2, b);
  return r;
}

/* sendTo(socket, buffer, sockaddr from peer()): one datagram, now; a send error is dropped (as dgram does) */
static napi_value send_to(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_batch *u = unwrap(env, argv[0]);
  if (!u) return NULL;
  void *data, *to;
  size_t size, to_len;
  if (buffer_of(env, argv[1], &data, &size) || buffer_of(env, argv[2], &to, &to_len) || to_len > sizeof(struct sockaddr_storage)) {
    napi_throw_type_error(env, NULL, "udp_batch.sendTo: a buffer and an address from peer()");
    return NULL;
  }
  if (!u->closed) (void)sendto(u->fd, data, size, MSG_DONTWAIT, (const struct sockaddr *)to, (socklen_t)to_len);
  return NULL;
}

static void on_closed(uv_handle_t *handle) {
  udp_batch *u = (udp_batch *)handle->data;
  u->closed = 2;
  if (u->collected) free(u);
}

/*
 * Stops reading and closes the socket now: the port is free when close() returns, as with dgram.
 * uv_close stops the poll at once (only its callback waits for the loop), so the descriptor is
 * closed after libuv has let go of it, before anything else can get its number.
 */
static void shut(udp_batch *u) {
  u->closed = 1;
  uv_poll_stop(&u->poll);
  uv_close((uv_handle_t *)&u->poll, on_closed);
  close(u->fd);
  u->fd = -1;
}

/* The environment goes away (a worker thread ends) with the socket open: closed with it. */
static void on_env_cleanup(void *arg) {
  udp_batch *u = (udp_batch *)arg;
  if (!u->closed) shut(u);
}

/* close(socket): stops reading and closes the socket */
static napi_value close_socket(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  udp_batch *u = unwrap(env, argv[0]);
  if (!u || u->closed) return NULL;
  shut(u);
  napi_remove_env_cleanup_hook(env, on_env_cleanup, u);
  napi_delete_reference(env, u->callback);
  napi_delete_reference(env, u->in_ref);
  napi_delete_reference(env, u->out_ref);
  napi_delete_reference(env, u->meta_ref);
  napi_async_destroy(env, u->context);
  /* The external can be collected now; it frees the struct once the poll handle is closed. */
  napi_delete_reference(env, u->self);
  return NULL;
}

static napi_value constant(napi_env env, int v) {
  napi_value r;
  napi_create_int32(env, v, &r);
  return r;
}

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
    {"open", NULL, open_socket, NULL, NULL, NULL, napi_enumerable, NULL},
    {"port", NULL, bound_port, NULL, NULL, NULL, napi_enumerable, NULL},
    {"peer", NULL, peer, NULL, NULL, NULL, napi_enumerable, NULL},
    {"sendTo", NULL, send_to, NULL, NULL, NULL, napi_enumerable, NULL},
    {"close", NULL, close_socket, NULL, NULL, NULL, napi_enumerable, NULL},
    {"BATCH", NULL, NULL, NULL, NULL, constant(env, BATCH), napi_enumerable, NULL},
    {"IN_SLOT", NULL, NULL, NULL, NULL, constant(env, IN_SLOT), napi_enumerable, NULL},
    {"OUT_SLOT", NULL, NULL, NULL, NULL, constant(env, OUT_SLOT), napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
