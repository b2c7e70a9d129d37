// The system libjpeg (libjpeg-turbo on Debian and Raspberry Pi OS), the same library libv4lconvert
// decodes MJPEG with. jpeglib.h needs stdio.h (FILE) and size_t declared before it.
#include <stddef.h>
#include <stdio.h>
#include <jpeglib.h>
