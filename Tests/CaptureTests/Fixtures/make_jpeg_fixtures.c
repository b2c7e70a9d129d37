// Writes the JPEG fixtures HostileJPEGTests reads (committed, so the tests need no encoder):
//   progressive-640x480.jpg  a flat grey progressive JPEG (libjpeg's own 6-scan progression),
//                            whose scans are tens of bytes each
//   704-scans-64x48.jpg      a valid progressive JPEG with 704 scans: every coefficient alone,
//                            first at Al=10 and then refined bit by bit (the most scans a valid
//                            progression of one component allows)
//   cmyk-64x48.jpg           an Adobe CMYK JPEG, which libjpeg cannot convert to RGB
// Build and run from this directory:
//   cc make_jpeg_fixtures.c -o /tmp/make_jpeg_fixtures -ljpeg && /tmp/make_jpeg_fixtures
#include <stdio.h>
#include <stdlib.h>
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

int main(void) {
    write_jpeg("progressive-640x480.jpg", 640, 480, 1, JCS_GRAYSCALE, 1, 0, 1);
    write_jpeg("704-scans-64x48.jpg", 64, 48, 1, JCS_GRAYSCALE, 0, 1, 0);
    write_jpeg("cmyk-64x48.jpg", 64, 48, 4, JCS_CMYK, 0, 0, 0);
    return 0;
}
