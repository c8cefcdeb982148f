// The self-pipe trick for shutdown signals: an async-signal-safe handler
// that writes the signal number to a pipe, whatever thread the kernel
// delivers the signal to. Read the pipe from an ordinary thread.
#ifndef CSIGNALPIPE_H
#define CSIGNALPIPE_H

/// Creates the pipe (once) and installs the handler for `signal_number`.
/// Returns the pipe's read end, or -1 with errno set.
int csignalpipe_install(int signal_number);

#endif
