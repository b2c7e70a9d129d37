// Writes the JPEG fixtures HostileJPEGTests reads (committed, so the tests need no encoder):
//   progressive-640x480.jpg  a flat grey progressive JPEG (libjpeg's own 6-scan progression),
//                            whose scans are tens of bytes each
//   704-scans-64x48.jpg      a valid progressive JPEG with 704 scans: every coefficient alone,
//                            first at Al=10 and then refined bit by bit (the most scans a valid
//                            progression of one component allows)
//   cmyk-64x48.jpg           an Adobe CMYK JPEG, which libjpeg cannot convert to RGB
// Build and run from this directory:
//   cc make_jpeg_fixtures.c -o /tmp/make_jpeg_fixtures -ljpeg && /tmp/make_jpeg_fixtures
// With `benchmark DIR` it writes, instead, the frames docs/development.md times (not committed):
//   DIR/scan-bomb-640x480.mjpeg, DIR/scan-bomb-4096x4096.mjpeg  a flat progressive JPEG with its
//       last AC refinement scan repeated 2,000 times (libjpeg warns, then carries on)
//   DIR/dearest-12-scans-640x480.mjpeg  the dearest valid progression posewatch accepts: 4:4:4
//       noise at quality 100, DC then whole-band AC scans refined bit by bit, 12 scans
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

static void write_jpeg(const char *path, int width, int height, int components, J_COLOR_SPACE space,
                       int progression, int many_scans, int flat) {
    FILE *file = fopen(path, "wb");
    if (file == NULL) { perror(path); exit(1); }
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    info.err = jpeg_std_error(&errors);
    jpeg_create_compress(&info);
    jpeg_stdio_dest(&info, file);
    info.image_width = width;
    info.image_height = height;
    info.input_components = components;
    info.in_color_space = space;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, 90, TRUE);
    jpeg_scan_info *scans = NULL;
    if (progression) jpeg_simple_progression(&info);
    if (many_scans) {
        int count = 0;
        scans = calloc(64 * 11, sizeof *scans);
        for (int k = 0; k < 64; k++) {
            scans[count++] = (jpeg_scan_info){1, {0}, k, k, 0, 10};
            for (int al = 10; al > 0; al--) scans[count++] = (jpeg_scan_info){1, {0}, k, k, al, al - 1};
        }
        info.scan_info = scans;
        info.num_scans = count;
    }
    jpeg_start_compress(&info, TRUE);
    JSAMPLE *row = malloc((size_t)width * components);
    while (info.next_scanline < info.image_height) {
        // Flat, or a gentle diagonal ramp so every scan carries a little data.
        for (int i = 0; i < width * components; i++)
            row[i] = flat ? 128 : (JSAMPLE)(64 + (i / components + info.next_scanline) % 128);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    fclose(file);
    free(row);
    free(scans);
}

// A flat grey progressive JPEG with its last scan refining AC 1-63 (and the Huffman table before
// it) repeated `times` more times before EOI.
static void write_scan_bomb(const char *path, int side_width, int side_height, int times) {
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    unsigned char *jpeg = NULL;
    unsigned long size = 0;
    info.err = jpeg_std_error(&errors);
    jpeg_create_compress(&info);
    jpeg_mem_dest(&info, &jpeg, &size);
    info.image_width = side_width;
    info.image_height = side_height;
    info.input_components = 1;
    info.in_color_space = JCS_GRAYSCALE;
    jpeg_set_defaults(&info);
    jpeg_simple_progression(&info);
    jpeg_start_compress(&info, TRUE);
    JSAMPLE *row = malloc(side_width);
    memset(row, 128, side_width);
    while (info.next_scanline < info.image_height) jpeg_write_scanlines(&info, &row, 1);
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    // Walk the segments; remember the last refinement scan of AC 1-63 with its table segment.
    size_t position = 2, table = 0, repeat_start = 0, repeat_end = 0;
    while (position + 4 <= size && jpeg[position + 1] != 0xD9) {
        unsigned char marker = jpeg[position + 1];
        size_t end = position + 2 + ((size_t)jpeg[position + 2] << 8 | jpeg[position + 3]);
        if (marker == 0xDA) {
            while (!(jpeg[end] == 0xFF && jpeg[end + 1] != 0 && (jpeg[end + 1] < 0xD0 || jpeg[end + 1] > 0xD7))) end++;
            size_t parameters = position + 5 + 2 * (size_t)jpeg[position + 4];
            if (jpeg[parameters] == 1 && jpeg[parameters + 1] == 63 && (jpeg[parameters + 2] >> 4) > 0) {
                repeat_start = table ? table : position;
                repeat_end = end;
            }
        }
        table = marker == 0xC4 ? position : 0;
        position = end;
    }
    FILE *file = fopen(path, "wb");
    if (file == NULL || repeat_end == 0) { perror(path); exit(1); }
    fwrite(jpeg, 1, position, file);
    for (int i = 0; i < times; i++) fwrite(jpeg + repeat_start, 1, repeat_end - repeat_start, file);
    fwrite(jpeg + position, 1, size - position, file);
    fclose(file);
    free(jpeg);
    free(row);
}

// 640x480 4:4:4 noise at quality 100 in 12 scans: DC, then per component the AC band 1-63 first
// at a coarse bit and refined bit by bit (5, 3 and 3 scans).
static void write_dearest_progression(const char *path) {
    struct jpeg_compress_struct info;
    struct jpeg_error_mgr errors;
    FILE *file = fopen(path, "wb");
    if (file == NULL) { perror(path); exit(1); }
    info.err = jpeg_std_error(&errors);
    jpeg_create_compress(&info);
    jpeg_stdio_dest(&info, file);
    info.image_width = 640;
    info.image_height = 480;
    info.input_components = 3;
    info.in_color_space = JCS_RGB;
    jpeg_set_defaults(&info);
    jpeg_set_quality(&info, 100, TRUE);
    for (int i = 0; i < 3; i++) info.comp_info[i].h_samp_factor = info.comp_info[i].v_samp_factor = 1;
    jpeg_scan_info scans[12];
    int count = 0, first_bit[3] = {4, 2, 2};
    scans[count++] = (jpeg_scan_info){3, {0, 1, 2}, 0, 0, 0, 0};
    for (int component = 0; component < 3; component++) {
        scans[count++] = (jpeg_scan_info){1, {component}, 1, 63, 0, first_bit[component]};
        for (int al = first_bit[component]; al > 0; al--) scans[count++] = (jpeg_scan_info){1, {component}, 1, 63, al, al - 1};
    }
    info.scan_info = scans;
    info.num_scans = count;
    jpeg_start_compress(&info, TRUE);
    JSAMPLE *row = malloc(640 * 3);
    unsigned seed = 1;
    while (info.next_scanline < info.image_height) {
        for (int i = 0; i < 640 * 3; i++) row[i] = (JSAMPLE)((seed = seed * 1103515245u + 12345u) >> 24);
        jpeg_write_scanlines(&info, &row, 1);
    }
    jpeg_finish_compress(&info);
    jpeg_destroy_compress(&info);
    fclose(file);
    free(row);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "benchmark") == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s/scan-bomb-640x480.mjpeg", argv[2]);
        write_scan_bomb(path, 640, 480, 2000);
        snprintf(path, sizeof path, "%s/scan-bomb-4096x4096.mjpeg", argv[2]);
        write_scan_bomb(path, 4096, 4096, 2000);
        snprintf(path, sizeof path, "%s/dearest-12-scans-640x480.mjpeg", argv[2]);
        write_dearest_progression(path);
        return 0;
    }
    write_jpeg("progressive-640x480.jpg", 640, 480, 1, JCS_GRAYSCALE, 1, 0, 1);
    write_jpeg("704-scans-64x48.jpg", 64, 48, 1, JCS_GRAYSCALE, 0, 1, 0);
    write_jpeg("cmyk-64x48.jpg", 64, 48, 4, JCS_CMYK, 0, 0, 0);
    return 0;
}
