#include "cjpeg.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct pw_jpeg_decoder {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    struct jpeg_progress_mgr progress;
    jmp_buf recovery;
    int warnings;
    /// Set while decoding a frame: a warning then ends the decode at once (see pw_jpeg_emit_message).
    int warnings_are_fatal;
    char message[JMSG_LENGTH_MAX];
};

static void pw_jpeg_error_exit(j_common_ptr info) {
    pw_jpeg_decoder *decoder = (pw_jpeg_decoder *)info->client_data;
    (*info->err->format_message)(info, decoder->message);
    longjmp(decoder->recovery, 1);
}

static void pw_jpeg_emit_message(j_common_ptr info, int level) {
    // level -1 is a warning (corrupt data, premature end, an inconsistent progression); positive
    // levels are trace messages.
    if (level < 0) {
        pw_jpeg_decoder *decoder = (pw_jpeg_decoder *)info->client_data;
        decoder->warnings += 1;
        (*info->err->format_message)(info, decoder->message);
        // A frame with a warning is refused anyway: stop now rather than decode the rest of a
        // picture that will be thrown away. libjpeg keeps going after "inconsistent progression
        // sequence", so 2,000 repeated refinement scans of a 4096x4096 frame cost a minute of
        // CPU before the warning count refused it (libjpeg-turbo's advice for untrusted input:
        // treat warnings as fatal, as djpeg -strict does).
        if (decoder->warnings_are_fatal) longjmp(decoder->recovery, 1);
    }
}

// libjpeg calls this before each unit of input it consumes (each iMCU row of a scan, each new
// scan header): the one place a decode can be stopped between scans.
static void pw_jpeg_progress_monitor(j_common_ptr info) {
    j_decompress_ptr decompress = (j_decompress_ptr)info;
    pw_jpeg_decoder *decoder = (pw_jpeg_decoder *)info->client_data;
    if (decompress->input_scan_number > PW_JPEG_MAXIMUM_SCANS) {
        snprintf(decoder->message, sizeof decoder->message, "the JPEG has more than %d scans", PW_JPEG_MAXIMUM_SCANS);
        longjmp(decoder->recovery, 1);
    }
    // A sequential JPEG codes each component in one scan, so it has at most one scan per
    // component; libjpeg decodes further scans of a component again without a warning (each a
    // full pass with its Huffman data: 200 of them cost 0.15 s at 640x480).
    if (!decompress->progressive_mode && decompress->input_scan_number > decompress->num_components) {
        snprintf(decoder->message, sizeof decoder->message, "the sequential JPEG has more scans than its %d components",
                 decompress->num_components);
        longjmp(decoder->recovery, 1);
    }
}

pw_jpeg_decoder *pw_jpeg_decoder_create(void) {
    pw_jpeg_decoder *decoder = calloc(1, sizeof(pw_jpeg_decoder));
    if (decoder == NULL) return NULL;
    decoder->info.err = jpeg_std_error(&decoder->errors);
    decoder->errors.error_exit = pw_jpeg_error_exit;
    decoder->errors.emit_message = pw_jpeg_emit_message;
    decoder->info.client_data = decoder;
    if (setjmp(decoder->recovery)) {
        free(decoder);
        return NULL;
    }
    jpeg_create_decompress(&decoder->info);
    // After jpeg_create_decompress, which zeroes every field but the error manager and client_data.
    decoder->progress.progress_monitor = pw_jpeg_progress_monitor;
    decoder->info.progress = &decoder->progress;
    // Progressive JPEGs keep every coefficient of the image in memory (2 bytes per sample): a
    // header may declare 65500x65500. With a budget libjpeg-turbo refuses such an image with an
    // error ("backing store not supported") instead of allocating gigabytes. 64 MiB holds a 4K
    // progressive frame with room to spare.
    decoder->info.mem->max_memory_to_use = 64L << 20;
    return decoder;
}

void pw_jpeg_decoder_destroy(pw_jpeg_decoder *decoder) {
    if (decoder == NULL) return;
    jpeg_destroy_decompress(&decoder->info);
    free(decoder);
}

const char *pw_jpeg_last_message(pw_jpeg_decoder *decoder) { return decoder->message; }

int pw_jpeg_read_header(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size, pw_jpeg_header *header) {
    decoder->warnings = 0;
    decoder->warnings_are_fatal = 0;
    decoder->message[0] = 0;
    if (size < 4) return -1;
    if (setjmp(decoder->recovery)) {
        jpeg_abort_decompress(&decoder->info);
        return -1;
    }
    jpeg_mem_src(&decoder->info, data, (unsigned long)size);
    jpeg_read_header(&decoder->info, TRUE);
    header->width = (int)decoder->info.image_width;
    header->height = (int)decoder->info.image_height;
    header->components = decoder->info.num_components;
    header->is_progressive = decoder->info.progressive_mode ? 1 : 0;
    switch (decoder->info.jpeg_color_space) {
    case JCS_GRAYSCALE: header->color_space = PW_JPEG_GRAYSCALE; break;
    case JCS_YCbCr: header->color_space = PW_JPEG_YCBCR; break;
    case JCS_RGB: header->color_space = PW_JPEG_RGB; break;
    case JCS_CMYK: header->color_space = PW_JPEG_CMYK; break;
    case JCS_YCCK: header->color_space = PW_JPEG_YCCK; break;
    default: header->color_space = PW_JPEG_OTHER_COLOR_SPACE; break;
    }
    jpeg_abort_decompress(&decoder->info);
    return 0;
}

int pw_jpeg_decode_rgb(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size,
                       unsigned scale_denominator, uint8_t *output, size_t output_capacity,
                       size_t stride, int *decoded_width, int *decoded_height) {
    decoder->warnings = 0;
    decoder->warnings_are_fatal = 1;
    decoder->message[0] = 0;
    if (size < 4) return -1;
    if (setjmp(decoder->recovery)) {
        jpeg_abort_decompress(&decoder->info);
        return -1;
    }
    struct jpeg_decompress_struct *info = &decoder->info;
    jpeg_mem_src(info, data, (unsigned long)size);
    jpeg_read_header(info, TRUE);
    // Refused before jpeg_start_decompress, which allocates working memory by the declared size.
    if (info->image_width > PW_JPEG_MAXIMUM_DIMENSION || info->image_height > PW_JPEG_MAXIMUM_DIMENSION) {
        snprintf(decoder->message, sizeof decoder->message, "the JPEG declares %ux%u, larger than %dx%d",
                 (unsigned)info->image_width, (unsigned)info->image_height, PW_JPEG_MAXIMUM_DIMENSION, PW_JPEG_MAXIMUM_DIMENSION);
        jpeg_abort_decompress(info);
        return -1;
    }
    info->out_color_space = JCS_RGB;
    info->scale_num = 1;
    info->scale_denom = scale_denominator;
    // Speed over the last bit of quality: the result is shrunk to 192x192 anyway.
    info->dct_method = JDCT_IFAST;
    info->do_fancy_upsampling = FALSE;
    jpeg_start_decompress(info);
    size_t width = info->output_width, height = info->output_height;
    if (info->output_components != 3 || width * 3 > stride || stride * (height - 1) + width * 3 > output_capacity) {
        jpeg_abort_decompress(info);
        snprintf(decoder->message, sizeof decoder->message, "decoded image %zux%zu does not fit the buffer", width, height);
        return -1;
    }
    while (info->output_scanline < info->output_height) {
        JSAMPROW row = output + (size_t)info->output_scanline * stride;
        if (jpeg_read_scanlines(info, &row, 1) != 1) break;
    }
    if (info->output_scanline < info->output_height) {
        jpeg_abort_decompress(info);
        return -1;
    }
    jpeg_finish_decompress(info);
    *decoded_width = (int)width;
    *decoded_height = (int)height;
    return decoder->warnings == 0 ? 0 : -1;
}
