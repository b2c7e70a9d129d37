// CV4L2's MJPEG decoder: a fixed-argument wrapper over libjpeg that Swift can call.
//
// libjpeg reports errors by calling a function that must not return (the default one calls exit),
// so recovery needs setjmp/longjmp, which Swift cannot do. This wrapper keeps the setjmp in C and
// turns every error (and every warning, which for a camera frame means corrupt data) into -1.
#ifndef POSEWATCH_CJPEG_H
#define POSEWATCH_CJPEG_H

#include <stddef.h>
#include <stdint.h>

/// The largest width or height `pw_jpeg_decode_rgb` decodes; larger images are refused before
/// libjpeg allocates anything for them. The same number as Capture's `FrameLayout.maximumDimension`.
#define PW_JPEG_MAXIMUM_DIMENSION 8192

/// The most scans (SOS markers) `pw_jpeg_decode_rgb` decodes; a frame with more is refused
/// before the first scan past the limit is decoded. Each scan is a pass over every block of the
/// components it covers, so the scan count bounds the CPU a small file can cost (2,000 repeated
/// refinement scans of a 4096x4096 frame: 178 KB, 20 s of CPU). Cameras send one scan
/// (baseline MJPEG); libjpeg's own progressive script writes 10 (colour) or 6 (grey). Chosen by
/// the dearest valid progression found for a 640x480 frame (4:4:4 noise at quality 100, every
/// scan a whole-band refinement): 12 scans cost about 30 ms of CPU on the development machine,
/// 16 about 45 ms (CaptureBenchmark --mjpeg; docs/development.md).
#define PW_JPEG_MAXIMUM_SCANS 12

/// An opaque libjpeg decompressor, created once and reused for every frame.
typedef struct pw_jpeg_decoder pw_jpeg_decoder;

/// `jpeg_create_decompress` with an error manager that longjmps instead of exiting.
/// Returns NULL when out of memory. Free with `pw_jpeg_decoder_destroy`.
pw_jpeg_decoder *pw_jpeg_decoder_create(void);

/// `jpeg_destroy_decompress` and free.
void pw_jpeg_decoder_destroy(pw_jpeg_decoder *decoder);

/// The colour space a JPEG's header declares (libjpeg's J_COLOR_SPACE, reduced to what posewatch
/// distinguishes).
typedef enum {
    PW_JPEG_GRAYSCALE = 1,
    PW_JPEG_YCBCR = 2,
    PW_JPEG_RGB = 3,
    /// Adobe CMYK and YCCK: libjpeg cannot convert these to RGB.
    PW_JPEG_CMYK = 4,
    PW_JPEG_YCCK = 5,
    PW_JPEG_OTHER_COLOR_SPACE = 6,
} pw_jpeg_color_space;

/// What `pw_jpeg_read_header` reads from a JPEG's header.
typedef struct {
    int width;
    int height;
    int components;
    pw_jpeg_color_space color_space;
    int is_progressive;
} pw_jpeg_header;

/// Reads the JPEG header only (`jpeg_read_header`, no decoding): size, components, colour space.
/// Returns 0, or -1 when the data is not a readable JPEG.
int pw_jpeg_read_header(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size, pw_jpeg_header *header);

/// Decodes `data` to packed RGB24 at 1/`scale_denominator` of its size (1, 2, 4 or 8; libjpeg
/// scales inside its inverse DCT, so a smaller output is also a cheaper decode) into `output`,
/// rows `stride` bytes apart. Returns 0 and the decoded size, or -1 when the data is corrupt
/// (an error or a warning such as "premature end of data"; decoding stops at the first), the
/// image is larger than PW_JPEG_MAXIMUM_DIMENSION either way, it has more than
/// PW_JPEG_MAXIMUM_SCANS scans, or `output` is too small.
/// MJPEG frames without Huffman tables (UVC cameras) decode with the standard tables, which
/// libjpeg-turbo supplies when a frame has none.
int pw_jpeg_decode_rgb(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size,
                       unsigned scale_denominator, uint8_t *output, size_t output_capacity,
                       size_t stride, int *decoded_width, int *decoded_height);

/// The last error or warning libjpeg reported, for diagnostics ("" when none).
const char *pw_jpeg_last_message(pw_jpeg_decoder *decoder);

#endif
