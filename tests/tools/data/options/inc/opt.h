// Found only through the command line's -I.
#define OFFSET 1.0f
