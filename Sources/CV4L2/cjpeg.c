#include "cjpeg.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

struct pw_jpeg_decoder {
    struct jpeg_decompress_struct info;
    struct jpeg_error_mgr errors;
    jmp_buf recovery;
    int warnings;
    char message[JMSG_LENGTH_MAX];
};

static void pw_jpeg_error_exit(j_common_ptr info) {
    pw_jpeg_decoder *decoder = (pw_jpeg_decoder *)info->client_data;
    (*info->err->format_message)(info, decoder->message);
    longjmp(decoder->recovery, 1);
}

static void pw_jpeg_emit_message(j_common_ptr info, int level) {
    // level -1 is a warning (corrupt data, premature end); positive levels are trace messages.
    if (level < 0) {
        pw_jpeg_decoder *decoder = (pw_jpeg_decoder *)info->client_data;
        decoder->warnings += 1;
        (*info->err->format_message)(info, decoder->message);
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

int pw_jpeg_read_size(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size, int *width, int *height) {
    decoder->warnings = 0;
    decoder->message[0] = 0;
    if (size < 4) return -1;
    if (setjmp(decoder->recovery)) {
        jpeg_abort_decompress(&decoder->info);
        return -1;
    }
    jpeg_mem_src(&decoder->info, data, (unsigned long)size);
    jpeg_read_header(&decoder->info, TRUE);
    *width = (int)decoder->info.image_width;
    *height = (int)decoder->info.image_height;
    jpeg_abort_decompress(&decoder->info);
    return 0;
}

int pw_jpeg_decode_rgb(pw_jpeg_decoder *decoder, const uint8_t *data, size_t size,
                       unsigned scale_denominator, uint8_t *output, size_t output_capacity,
                       size_t stride, int *decoded_width, int *decoded_height) {
    decoder->warnings = 0;
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
