#define _GNU_SOURCE
#include "CSignalPipe.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int csignalpipe_fds[2] = {-1, -1};

static void csignalpipe_handler(int signal_number) {
    int saved_errno = errno;
    unsigned char byte = (unsigned char)signal_number;
    // write(2) is async-signal-safe; a full pipe just drops the byte (a
    // shutdown is already pending then).
    ssize_t ignored = write(csignalpipe_fds[1], &byte, 1);
    (void)ignored;
    errno = saved_errno;
}

int csignalpipe_install(int signal_number) {
    if (csignalpipe_fds[0] < 0) {
        if (pipe2(csignalpipe_fds, O_CLOEXEC) != 0) return -1;
        int flags = fcntl(csignalpipe_fds[1], F_GETFL);
        if (flags < 0 || fcntl(csignalpipe_fds[1], F_SETFL, flags | O_NONBLOCK) != 0) return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = csignalpipe_handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    if (sigaction(signal_number, &action, NULL) != 0) return -1;
    return csignalpipe_fds[0];
}
