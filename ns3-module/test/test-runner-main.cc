/*
 * rdma-lb: a test runner for the out-of-tree build (Debian's libns3-dev ships ns-3's test
 * framework in libns3-core but no test-runner binary). Same options as ns-3's test-runner,
 * e.g. `rdma-lb-test-runner --suite=rdma-lb --verbose`. Not used inside an ns-3 tree, where
 * ns-3's own test-runner and test.py run the suite.
 */
#include "ns3/test.h"

int
main(int argc, char* argv[])
{
    return ns3::TestRunner::Run(argc, argv);
}
