/* Linked only into the test programs that scripts/sanitize.sh builds for
 * LeakSanitizer and valgrind (with -rdynamic, so that the MPI libraries'
 * calls resolve here): dlclose does nothing, so every plugin the MPI stack
 * dlopens stays mapped until the process exits.
 *
 * Why: MPICH's hwloc unloads its PCI plugin (and with it libpciaccess, whose
 * globals still point at the memory it allocated) inside MPI_Init, and Open
 * MPI unloads all its MCA components (and libpmix) in MPI_Finalize. The leak
 * checkers run at exit, after that: memory held only by an unloaded
 * library's globals is then reported as leaked, and the frames that
 * allocated it are "<unknown module>", which no suppression can name.
 * Keeping the plugins mapped keeps that memory reachable and their frames
 * nameable, so the suppression files can name the MPI functions that
 * really leak and nothing else. Our library never calls dlclose. */
int dlclose(void *handle);

int dlclose(void *handle)
{
    (void)handle;
    return 0;
}
