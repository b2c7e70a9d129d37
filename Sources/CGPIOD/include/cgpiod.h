// CGPIOD: one small GPIO API for posewatch, implemented over libgpiod v1 (Debian 12, 1.6.x) or
// libgpiod v2 (Debian 13 and current Raspberry Pi OS, 2.x). Which one is chosen at compile time
// from the installed <gpiod.h>; Swift only ever sees the functions below.
//
// Ownership: a chip handle owns the chip's file descriptor; a request handle owns the requested
// lines. Release the request before closing the chip it came from. Every function that fails
// returns NULL or -1 and leaves the reason in errno.
#ifndef POSEWATCH_CGPIOD_H
#define POSEWATCH_CGPIOD_H

#include <stddef.h>

typedef struct pw_gpio_chip pw_gpio_chip;
typedef struct pw_gpio_request pw_gpio_request;

/// "libgpiod v1 1.6.3" or "libgpiod v2 2.1.3": the backend this build uses and the library's version.
const char *pw_gpio_backend(void);

/// Opens a chip by device path (`/dev/gpiochip0`). NULL and errno on failure.
pw_gpio_chip *pw_gpio_chip_open(const char *path);

/// Closes a chip opened with `pw_gpio_chip_open`.
void pw_gpio_chip_close(pw_gpio_chip *chip);

/// Copies the chip's kernel name (`gpiochip0`) and label (`pinctrl-bcm2711`) into the caller's
/// buffers (truncated, always NUL-terminated) and stores its line count. 0, or -1 and errno.
int pw_gpio_chip_describe(pw_gpio_chip *chip, char *name, size_t name_capacity,
                          char *label, size_t label_capacity, unsigned int *line_count);

/// Describes one line: its name and consumer (empty strings when unset) and whether it is in use.
/// 0, or -1 and errno.
int pw_gpio_line_describe(pw_gpio_chip *chip, unsigned int offset,
                          char *name, size_t name_capacity,
                          char *consumer, size_t consumer_capacity, int *is_used);

/// Requests `count` lines as outputs with the given consumer name and initial values (0 or 1).
/// NULL and errno on failure (EBUSY: another consumer holds a line).
pw_gpio_request *pw_gpio_request_outputs(pw_gpio_chip *chip, const unsigned int *offsets,
                                         size_t count, const char *consumer,
                                         const int *initial_values);

/// Drives the line at `index` (position in the offsets given to the request) to `value` (0 or 1).
/// 0, or -1 and errno.
int pw_gpio_request_set_value(pw_gpio_request *request, size_t index, int value);

/// Releases the lines; the kernel keeps their last value until someone else requests them.
void pw_gpio_request_release(pw_gpio_request *request);

#endif
