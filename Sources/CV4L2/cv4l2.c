#include "cv4l2.h"
#include <libv4l2.h>
#include <sys/ioctl.h>

int pw_ioctl(int fd, unsigned long request, void *argument) { return ioctl(fd, request, argument); }
int pw_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
int pw_v4l2_ioctl(int fd, unsigned long request, void *argument) { return v4l2_ioctl(fd, request, argument); }
int pw_v4l2_close(int fd) { return v4l2_close(fd); }
void *pw_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset) {
    return v4l2_mmap(start, length, prot, flags, fd, offset);
}
int pw_v4l2_munmap(void *start, size_t length) { return v4l2_munmap(start, length); }
int pw_v4l2_fd_open(int fd, int flags) { return v4l2_fd_open(fd, flags); }
