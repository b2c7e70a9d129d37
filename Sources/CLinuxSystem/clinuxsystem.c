// Headers only; this file gives the target an object to build.
