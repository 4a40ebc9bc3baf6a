/* aftershock's listener: accepts TCP connections on one port, answers "ok" and closes.
 *
 * Workloads whose readiness is probed on a real kubelet (kind) run it, so that readiness
 * means "the pod's network answers": what a NetworkChaos partition takes away. Static, no
 * userland, built with gcc like pause. Usage: listener [PORT] (default 8080).
 *
 * First it writes what its container sees, a line each, to its log: every environment
 * variable ("aftershock-sees env NAME=VALUE") and every entry of /dev ("aftershock-sees dev
 * NAME"), then "aftershock-sees end": what a device driver's CDI edits gave the container, read
 * from inside it (secure accelerator access, D13). */
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

extern char **environ;

static void show_what_it_sees(void) {
    for (char **variable = environ; *variable; variable++)
        printf("aftershock-sees env %s\n", *variable);
    DIR *dev = opendir("/dev");
    for (struct dirent *entry = dev ? readdir(dev) : NULL; entry; entry = readdir(dev))
        if (entry->d_name[0] != '.')
            printf("aftershock-sees dev %s\n", entry->d_name);
    if (dev)
        closedir(dev);
    printf("aftershock-sees end\n");
}

static void stop(int signal_number) {
    (void)signal_number;
    _exit(0);
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 8080;
    if (port <= 0 || port > 65535) {
        fprintf(stderr, "listener: bad port '%s'\n", argv[1]);
        return 2;
    }
    show_what_it_sees();
    /* as a container's first process SIGTERM would otherwise be ignored */
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    signal(SIGPIPE, SIG_IGN);
    int server = socket(AF_INET, SOCK_STREAM, 0);
    int yes = 1;
    setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    struct sockaddr_in address = {0};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_ANY);
    address.sin_port = htons((unsigned short)port);
    if (server < 0 || bind(server, (struct sockaddr *)&address, sizeof address) != 0 ||
        listen(server, 64) != 0) {
        perror("listener");
        return 1;
    }
    printf("listening on port %d\n", port);
    fflush(stdout);
    for (;;) {
        int client = accept(server, NULL, NULL);
        if (client < 0)
            continue;
        (void)!write(client, "ok\n", 3);
        close(client);
    }
}
