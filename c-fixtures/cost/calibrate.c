/* Nothing but main: an instrumented program's runtime measures what every probe kind costs at
   start-up, and `instrument cost` runs this one to learn those costs on this machine. */
int main(void) { return 0; }
