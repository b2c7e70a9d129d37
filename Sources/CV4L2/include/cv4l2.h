// CV4L2: the parts of the V4L2 API Swift cannot import on its own.
//
// Swift imports the structs and plain integer macros from <linux/videodev2.h> directly. What it
// cannot import are function-like macros (every VIDIOC_* request code is built with _IOWR, every
// pixel format with v4l2_fourcc) and variadic C functions (ioctl, v4l2_ioctl, v4l2_open). This
// header re-exports those as typed constants and fixed-argument wrappers, and nothing else.
#ifndef POSEWATCH_CV4L2_H
#define POSEWATCH_CV4L2_H

#include <linux/videodev2.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

// MARK: ioctl request codes (VIDIOC_*)
static const unsigned long PW_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long PW_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long PW_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long PW_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long PW_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long PW_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long PW_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long PW_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long PW_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long PW_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long PW_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long PW_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long PW_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long PW_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long PW_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long PW_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long PW_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long PW_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long PW_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long PW_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;
static const unsigned long PW_VIDIOC_G_INPUT = VIDIOC_G_INPUT;
static const unsigned long PW_VIDIOC_S_INPUT = VIDIOC_S_INPUT;
static const unsigned long PW_VIDIOC_SUBSCRIBE_EVENT = VIDIOC_SUBSCRIBE_EVENT;
static const unsigned long PW_VIDIOC_DQEVENT = VIDIOC_DQEVENT;

// MARK: pixel formats (V4L2_PIX_FMT_*), the ones posewatch reads or recognises
static const uint32_t PW_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t PW_PIX_FMT_UYVY = V4L2_PIX_FMT_UYVY;
static const uint32_t PW_PIX_FMT_YVYU = V4L2_PIX_FMT_YVYU;
static const uint32_t PW_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const uint32_t PW_PIX_FMT_NV21 = V4L2_PIX_FMT_NV21;
static const uint32_t PW_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
static const uint32_t PW_PIX_FMT_YUV422P = V4L2_PIX_FMT_YUV422P;
static const uint32_t PW_PIX_FMT_YVU420 = V4L2_PIX_FMT_YVU420;
static const uint32_t PW_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
static const uint32_t PW_PIX_FMT_BGR24 = V4L2_PIX_FMT_BGR24;
static const uint32_t PW_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;
static const uint32_t PW_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t PW_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const uint32_t PW_PIX_FMT_H264 = V4L2_PIX_FMT_H264;
// Bayer (raw sensor) formats: what a Raspberry Pi CSI module shows through unicam / rp1-cfe.
static const uint32_t PW_PIX_FMT_SBGGR8 = V4L2_PIX_FMT_SBGGR8;
static const uint32_t PW_PIX_FMT_SGBRG8 = V4L2_PIX_FMT_SGBRG8;
static const uint32_t PW_PIX_FMT_SGRBG8 = V4L2_PIX_FMT_SGRBG8;
static const uint32_t PW_PIX_FMT_SRGGB8 = V4L2_PIX_FMT_SRGGB8;
static const uint32_t PW_PIX_FMT_SBGGR10 = V4L2_PIX_FMT_SBGGR10;
static const uint32_t PW_PIX_FMT_SGBRG10 = V4L2_PIX_FMT_SGBRG10;
static const uint32_t PW_PIX_FMT_SGRBG10 = V4L2_PIX_FMT_SGRBG10;
static const uint32_t PW_PIX_FMT_SRGGB10 = V4L2_PIX_FMT_SRGGB10;
static const uint32_t PW_PIX_FMT_SBGGR10P = V4L2_PIX_FMT_SBGGR10P;
static const uint32_t PW_PIX_FMT_SGBRG10P = V4L2_PIX_FMT_SGBRG10P;
static const uint32_t PW_PIX_FMT_SGRBG10P = V4L2_PIX_FMT_SGRBG10P;
static const uint32_t PW_PIX_FMT_SRGGB10P = V4L2_PIX_FMT_SRGGB10P;
static const uint32_t PW_PIX_FMT_SBGGR12 = V4L2_PIX_FMT_SBGGR12;
static const uint32_t PW_PIX_FMT_SGBRG12 = V4L2_PIX_FMT_SGBRG12;
static const uint32_t PW_PIX_FMT_SGRBG12 = V4L2_PIX_FMT_SGRBG12;
static const uint32_t PW_PIX_FMT_SRGGB12 = V4L2_PIX_FMT_SRGGB12;
static const uint32_t PW_PIX_FMT_SBGGR12P = V4L2_PIX_FMT_SBGGR12P;
static const uint32_t PW_PIX_FMT_SGBRG12P = V4L2_PIX_FMT_SGBRG12P;
static const uint32_t PW_PIX_FMT_SGRBG12P = V4L2_PIX_FMT_SGRBG12P;
static const uint32_t PW_PIX_FMT_SRGGB12P = V4L2_PIX_FMT_SRGGB12P;

// MARK: fixed-argument wrappers for variadic C functions

/// `ioctl(2)` with one pointer argument, straight to the kernel (no libv4l2 emulation).
int pw_ioctl(int fd, unsigned long request, void *argument);

/// `v4l2_open(3)`: opens a device through libv4l2, so later `pw_v4l2_ioctl` calls may use
/// libv4lconvert's emulated formats (RGB24 from MJPEG, …). Returns -1 and sets errno on failure.
int pw_v4l2_open(const char *path, int flags);

/// `v4l2_ioctl(3)` with one pointer argument. Returns -1 and sets errno on failure.
int pw_v4l2_ioctl(int fd, unsigned long request, void *argument);

/// `v4l2_close(3)`.
int pw_v4l2_close(int fd);

/// `v4l2_mmap(3)`. Returns MAP_FAILED (`(void *)-1`) and sets errno on failure.
void *pw_v4l2_mmap(void *start, size_t length, int prot, int flags, int fd, int64_t offset);

/// `v4l2_munmap(3)`.
int pw_v4l2_munmap(void *start, size_t length);

/// `v4l2_fd_open(3)`: wraps an already open fd so libv4l2 may convert its formats.
int pw_v4l2_fd_open(int fd, int flags);

#endif
