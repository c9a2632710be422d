"""Runs a command with io_uring refused as Docker's default seccomp profile refuses it.

    python3 deny_io_uring.py COMMAND [ARGUMENT...]

Installs a seccomp filter (stdlib ctypes, no packages) under which io_uring_setup,
io_uring_enter and io_uring_register (425-427 on every architecture Linux numbers
generically, x86-64 and arm64 included) fail with EPERM and every other system call is
allowed, then replaces itself with COMMAND, which inherits the filter. The end-to-end
tests start the built hearth binary this way to see it fall back to one send() per
connection on a kernel that refuses io_uring.
"""
import ctypes
import errno
import os
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
BPF_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
BPF_JGT_K = 0x25  # BPF_JMP | BPF_JGT | BPF_K
BPF_RET_K = 0x06  # BPF_RET | BPF_K
FIRST, LAST = 425, 427  # io_uring_setup, io_uring_enter, io_uring_register


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: deny_io_uring.py COMMAND [ARGUMENT...]")
    program = [
        SockFilter(BPF_LD_W_ABS, 0, 0, 0),  # A = seccomp_data.nr
        SockFilter(BPF_JGE_K, 0, 2, FIRST),  # below the io_uring calls: allow
        SockFilter(BPF_JGT_K, 1, 0, LAST),  # above them: allow
        SockFilter(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        SockFilter(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    filters = (SockFilter * len(program))(*program)
    fprog = SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_NO_NEW_PRIVS): %s" % os.strerror(ctypes.get_errno()))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        sys.exit("prctl(PR_SET_SECCOMP): %s" % os.strerror(ctypes.get_errno()))
    os.execv(sys.argv[1], sys.argv[1:])


if __name__ == "__main__":
    main()
