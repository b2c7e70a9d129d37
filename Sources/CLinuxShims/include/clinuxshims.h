// CLinuxShims: the few Linux calls Swift's Glibc module does not import: memfd_create and its
// seals (declared only under _GNU_SOURCE) and the CMSG_* macros needed to pass a descriptor with
// SCM_RIGHTS. Everything else posewatch does with sockets is plain Swift over Glibc.
#ifndef POSEWATCH_CLINUXSHIMS_H
#define POSEWATCH_CLINUXSHIMS_H

#include <stddef.h>
#include <sys/socket.h>

/// Creates a memfd named `name`, writes `count` bytes into it and seals it against any further
/// change (F_SEAL_SHRINK|GROW|WRITE|SEAL), as journald requires of an entry passed by descriptor.
/// The caller owns the returned descriptor. -1 and errno on failure.
int pw_memfd_create_sealed(const char *name, const void *bytes, size_t count);

/// Sends one datagram with no payload carrying `passed_fd` as SCM_RIGHTS to `address`
/// (`sendmsg(2)` with MSG_NOSIGNAL). Returns sendmsg's result; -1 and errno on failure.
long pw_send_descriptor(int socket_fd, const struct sockaddr *address, socklen_t address_length,
                        int passed_fd);

#endif
