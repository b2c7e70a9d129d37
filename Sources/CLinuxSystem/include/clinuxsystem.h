// CLinuxSystem: Linux headers that Swift's Glibc module does not include.
// signalfd and timerfd put signals and timers into the frame loop's one poll(); statfs tells a
// file of /proc or /sys from a file on a disk; prctl turns transparent huge pages off.
#ifndef POSEWATCH_CLINUXSYSTEM_H
#define POSEWATCH_CLINUXSYSTEM_H

#include <sys/prctl.h>
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

// Transparent huge pages off for this process and what it starts (prctl's PR_SET_THP_DISABLE,
// Linux 3.15; prctl is variadic, which Swift cannot call), and whether they are off (1, 0; -1 and
// errno on failure).
static inline int pw_disable_transparent_huge_pages(void) { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0); }
static inline int pw_transparent_huge_pages_disabled(void) { return prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0); }

#endif
