// CLinuxSystem: Linux headers that Swift's Glibc module does not include.
// signalfd and timerfd put signals and timers into the frame loop's one poll().
#ifndef POSEWATCH_CLINUXSYSTEM_H
#define POSEWATCH_CLINUXSYSTEM_H

#include <sys/signalfd.h>
#include <sys/timerfd.h>

// The flag macros expand to enum members on glibc, which Swift sees only through these constants.
static const int PW_SFD_NONBLOCK = SFD_NONBLOCK;
static const int PW_SFD_CLOEXEC = SFD_CLOEXEC;
static const int PW_TFD_NONBLOCK = TFD_NONBLOCK;
static const int PW_TFD_CLOEXEC = TFD_CLOEXEC;
static const int PW_TFD_TIMER_ABSTIME = TFD_TIMER_ABSTIME;

#endif
