// The libgpiod v1/v2 split lives here and nowhere else. v1's header defines
// GPIOD_LINE_BULK_MAX_LINES (the v1 "bulk" API); v2 removed bulks entirely.
#include "cgpiod.h"
#include <gpiod.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_string(char *destination, size_t capacity, const char *source) {
    if (capacity == 0) return;
    snprintf(destination, capacity, "%s", source ? source : "");
}

#ifdef GPIOD_LINE_BULK_MAX_LINES
// MARK: libgpiod v1

struct pw_gpio_chip { struct gpiod_chip *chip; };
// v1 requests a bulk as one kernel line handle, and gpiod_line_set_value() on one of its lines sends
// that value as values[0] of the whole handle, i.e. to the bulk's FIRST line. So the request keeps
// every line's current value and always sets the whole bulk (found on gpio-sim: writes to line 3
// moved line 0).
struct pw_gpio_request { struct gpiod_line_bulk bulk; size_t count; int values[GPIOD_LINE_BULK_MAX_LINES]; };

const char *pw_gpio_backend(void) {
    static char text[64];
    snprintf(text, sizeof text, "libgpiod v1 %s", gpiod_version_string());
    return text;
}

pw_gpio_chip *pw_gpio_chip_open(const char *path) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return NULL;
    pw_gpio_chip *handle = calloc(1, sizeof *handle);
    if (!handle) { gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    handle->chip = chip;
    return handle;
}

void pw_gpio_chip_close(pw_gpio_chip *chip) {
    if (!chip) return;
    gpiod_chip_close(chip->chip);
    free(chip);
}

int pw_gpio_chip_describe(pw_gpio_chip *chip, char *name, size_t name_capacity,
                          char *label, size_t label_capacity, unsigned int *line_count) {
    copy_string(name, name_capacity, gpiod_chip_name(chip->chip));
    copy_string(label, label_capacity, gpiod_chip_label(chip->chip));
    *line_count = gpiod_chip_num_lines(chip->chip);
    return 0;
}

int pw_gpio_line_describe(pw_gpio_chip *chip, unsigned int offset,
                          char *name, size_t name_capacity,
                          char *consumer, size_t consumer_capacity, int *is_used) {
    struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offset);
    if (!line) return -1;
    if (gpiod_line_update(line) < 0) return -1;
    copy_string(name, name_capacity, gpiod_line_name(line));
    copy_string(consumer, consumer_capacity, gpiod_line_consumer(line));
    *is_used = gpiod_line_is_used(line) ? 1 : 0;
    return 0;
}

pw_gpio_request *pw_gpio_request_outputs(pw_gpio_chip *chip, const unsigned int *offsets,
                                         size_t count, const char *consumer,
                                         const int *initial_values) {
    if (count == 0 || count > GPIOD_LINE_BULK_MAX_LINES) { errno = EINVAL; return NULL; }
    pw_gpio_request *request = calloc(1, sizeof *request);
    if (!request) { errno = ENOMEM; return NULL; }
    gpiod_line_bulk_init(&request->bulk);
    for (size_t i = 0; i < count; i++) {
        struct gpiod_line *line = gpiod_chip_get_line(chip->chip, offsets[i]);
        if (!line) { free(request); return NULL; }
        gpiod_line_bulk_add(&request->bulk, line);
    }
    if (gpiod_line_request_bulk_output(&request->bulk, consumer, initial_values) < 0) {
        int saved = errno;
        free(request);
        errno = saved;
        return NULL;
    }
    request->count = count;
    for (size_t i = 0; i < count; i++) request->values[i] = initial_values[i] ? 1 : 0;
    return request;
}

int pw_gpio_request_set_value(pw_gpio_request *request, size_t index, int value) {
    if (index >= request->count) { errno = EINVAL; return -1; }
    int previous = request->values[index];
    request->values[index] = value ? 1 : 0;
    if (gpiod_line_set_value_bulk(&request->bulk, request->values) < 0) {
        int saved = errno;
        request->values[index] = previous;
        errno = saved;
        return -1;
    }
    return 0;
}

void pw_gpio_request_release(pw_gpio_request *request) {
    if (!request) return;
    gpiod_line_release_bulk(&request->bulk);
    free(request);
}

#else
// MARK: libgpiod v2

struct pw_gpio_chip { struct gpiod_chip *chip; };
struct pw_gpio_request { struct gpiod_line_request *request; size_t count; unsigned int *offsets; };

const char *pw_gpio_backend(void) {
    static char text[64];
    snprintf(text, sizeof text, "libgpiod v2 %s", gpiod_api_version());
    return text;
}

pw_gpio_chip *pw_gpio_chip_open(const char *path) {
    struct gpiod_chip *chip = gpiod_chip_open(path);
    if (!chip) return NULL;
    pw_gpio_chip *handle = calloc(1, sizeof *handle);
    if (!handle) { gpiod_chip_close(chip); errno = ENOMEM; return NULL; }
    handle->chip = chip;
    return handle;
}

void pw_gpio_chip_close(pw_gpio_chip *chip) {
    if (!chip) return;
    gpiod_chip_close(chip->chip);
    free(chip);
}

int pw_gpio_chip_describe(pw_gpio_chip *chip, char *name, size_t name_capacity,
                          char *label, size_t label_capacity, unsigned int *line_count) {
    struct gpiod_chip_info *info = gpiod_chip_get_info(chip->chip);
    if (!info) return -1;
    copy_string(name, name_capacity, gpiod_chip_info_get_name(info));
    copy_string(label, label_capacity, gpiod_chip_info_get_label(info));
    *line_count = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
    return 0;
}

int pw_gpio_line_describe(pw_gpio_chip *chip, unsigned int offset,
                          char *name, size_t name_capacity,
                          char *consumer, size_t consumer_capacity, int *is_used) {
    struct gpiod_line_info *info = gpiod_chip_get_line_info(chip->chip, offset);
    if (!info) return -1;
    copy_string(name, name_capacity, gpiod_line_info_get_name(info));
    copy_string(consumer, consumer_capacity, gpiod_line_info_get_consumer(info));
    *is_used = gpiod_line_info_is_used(info) ? 1 : 0;
    gpiod_line_info_free(info);
    return 0;
}

pw_gpio_request *pw_gpio_request_outputs(pw_gpio_chip *chip, const unsigned int *offsets,
                                         size_t count, const char *consumer,
                                         const int *initial_values) {
    if (count == 0) { errno = EINVAL; return NULL; }
    pw_gpio_request *handle = calloc(1, sizeof *handle);
    unsigned int *kept_offsets = calloc(count, sizeof *kept_offsets);
    struct gpiod_line_config *line_config = gpiod_line_config_new();
    struct gpiod_request_config *request_config = gpiod_request_config_new();
    struct gpiod_line_request *request = NULL;
    int saved = ENOMEM;
    if (!handle || !kept_offsets || !line_config || !request_config) goto done;
    // The settings object is only a template: add_line_settings copies it for each line.
    for (size_t i = 0; i < count; i++) {
        struct gpiod_line_settings *settings = gpiod_line_settings_new();
        if (!settings) goto done;
        gpiod_line_settings_set_direction(settings, GPIOD_LINE_DIRECTION_OUTPUT);
        gpiod_line_settings_set_output_value(
            settings, initial_values[i] ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
        int added = gpiod_line_config_add_line_settings(line_config, &offsets[i], 1, settings);
        saved = errno;
        gpiod_line_settings_free(settings);
        if (added < 0) goto done;
        kept_offsets[i] = offsets[i];
    }
    gpiod_request_config_set_consumer(request_config, consumer);
    request = gpiod_chip_request_lines(chip->chip, request_config, line_config);
    saved = errno;
done:
    if (line_config) gpiod_line_config_free(line_config);
    if (request_config) gpiod_request_config_free(request_config);
    if (!request) {
        free(kept_offsets);
        free(handle);
        errno = saved;
        return NULL;
    }
    handle->request = request;
    handle->count = count;
    handle->offsets = kept_offsets;
    return handle;
}

int pw_gpio_request_set_value(pw_gpio_request *request, size_t index, int value) {
    if (index >= request->count) { errno = EINVAL; return -1; }
    return gpiod_line_request_set_value(request->request, request->offsets[index],
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
}

void pw_gpio_request_release(pw_gpio_request *request) {
    if (!request) return;
    gpiod_line_request_release(request->request);
    free(request->offsets);
    free(request);
}
#endif
