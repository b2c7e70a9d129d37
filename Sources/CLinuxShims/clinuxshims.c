#define _GNU_SOURCE
#include "clinuxshims.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int pw_memfd_create_sealed(const char *name, const void *bytes, size_t count) {
    int fd = memfd_create(name, MFD_ALLOW_SEALING | MFD_CLOEXEC);
    if (fd < 0) return -1;
    const char *cursor = bytes;
    size_t left = count;
    while (left > 0) {
        ssize_t written = write(fd, cursor, left);
        if (written < 0) {
            if (errno == EINTR) continue;
            int saved = errno; close(fd); errno = saved; return -1;
        }
        cursor += written;
        left -= (size_t)written;
    }
    if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
        int saved = errno; close(fd); errno = saved; return -1;
    }
    return fd;
}

long pw_send_descriptor(int socket_fd, const struct sockaddr *address, socklen_t address_length,
                        int passed_fd) {
    union { struct cmsghdr header; char space[CMSG_SPACE(sizeof(int))]; } control;
    memset(&control, 0, sizeof control);
    struct msghdr message = {0};
    message.msg_name = (void *)address;
    message.msg_namelen = address_length;
    message.msg_control = control.space;
    message.msg_controllen = sizeof control.space;
    struct cmsghdr *header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(header), &passed_fd, sizeof(int));
    long result;
    do { result = sendmsg(socket_fd, &message, MSG_NOSIGNAL); } while (result < 0 && errno == EINTR);
    return result;
}
