// CLinuxSystem: Linux headers that Swift's Glibc module does not include.
// signalfd and timerfd put signals and timers into the frame loop's one poll(); statfs tells a
// file of /proc or /sys from a file on a disk.
#ifndef POSEWATCH_CLINUXSYSTEM_H
#define POSEWATCH_CLINUXSYSTEM_H

#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/vfs.h>
#include <stdio.h>

// The flag macros expand to enum members on glibc, which Swift sees only through these constants.
static const int PW_SFD_NONBLOCK = SFD_NONBLOCK;
static const int PW_SFD_CLOEXEC = SFD_CLOEXEC;
static const int PW_TFD_NONBLOCK = TFD_NONBLOCK;
static const int PW_TFD_CLOEXEC = TFD_CLOEXEC;
static const int PW_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;

// The magic number of the file system `fd` lives on (statfs f_type, as 32 bits: 32-bit ARM's
// f_type is signed). 0 on success, -1 with errno set.
static inline int pw_file_system_type(int fd, unsigned int *type) {
    struct statfs status;
    if (fstatfs(fd, &status) != 0) return -1;
    *type = (unsigned int)status.f_type;
    return 0;
}

// C's stdout, which Swift 6 may not name (a shared mutable global): flush it (0 or EOF with
// errno set), and whether any write to it has failed (its sticky error flag).
static inline int pw_standard_output_flush(void) { return fflush(stdout); }
static inline int pw_standard_output_failed(void) { return ferror(stdout) != 0; }

#endif
