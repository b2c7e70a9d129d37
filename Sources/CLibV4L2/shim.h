#include <libv4l2.h>
#include <libv4lconvert.h>
