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

/// An opaque libjpeg decompressor, created once and reused for every frame.
typedef struct pw_jpeg_decoder pw_jpeg_decoder;

/// `jpeg_create_decompress` with an error manager that longjmps instead of exiting.
/// Returns NULL when out of memory. Free with `pw_jpeg_decoder_destroy`.
pw_jpeg_decoder *pw_jpeg_decoder_create(void);

/// `jpeg_destroy_decompress` and free.
void pw_jpeg_decoder_destroy(pw_jpeg_decoder *decoder);

/// Reads the JPEG header only (`jpeg_read_header`): the image size. Returns 0, or -1 when the
/// data is not a readable JPEG.
int pw_jpeg_read_size(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size, int *width, int *height);

/// Decodes `data` to packed RGB24 at 1/`scale_denominator` of its size (1, 2, 4 or 8; libjpeg
/// scales inside its inverse DCT, so a smaller output is also a cheaper decode) into `output`,
/// rows `stride` bytes apart. Returns 0 and the decoded size, or -1 when the data is corrupt
/// (an error or a warning such as "premature end of data"), the image is larger than
/// PW_JPEG_MAXIMUM_DIMENSION either way, or `output` is too small.
/// MJPEG frames without Huffman tables (UVC cameras) decode with the standard tables, which
/// libjpeg-turbo supplies when a frame has none.
int pw_jpeg_decode_rgb(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size,
                       unsigned scale_denominator, uint8_t *output, size_t output_capacity,
                       size_t stride, int *decoded_width, int *decoded_height);

/// The last error or warning libjpeg reported, for diagnostics ("" when none).
const char *pw_jpeg_last_message(pw_jpeg_decoder *decoder);

#endif
