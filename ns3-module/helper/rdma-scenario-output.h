/*
 * rdma-lb: the output files of a scenario run (RdmaScenarioRunner; doc/rdma-lb.rst,
 * "Scenarios"): the traces streamed while the simulation runs -- pfc.txt (PFC frames received,
 * the reference's pfc trace), queue.txt and uplink.txt (ConWeave's queue and ToR-uplink
 * monitors), rate.txt and retx.txt (RdmaRateTrace) -- and, written at the end, ConWeave's
 * fct.txt, flows.csv, collectives.csv and summary.json (RdmaScenarioRunner::FctText, FlowsCsv,
 * CollectivesCsv, SummaryJson, defined in rdma-scenario-output.cc). Every file is written as
 * NAME.part and renamed when the run commits, summary.json last (RdmaOutputDir). Without an
 * output directory the traces go to memory (RdmaScenarioRunner::PfcText, ...).
 */
#ifndef RDMA_SCENARIO_OUTPUT_H
#define RDMA_SCENARIO_OUTPUT_H

#include "rdma-output-dir.h"

#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

struct RdmaScenarioRun;

/**
 * \ingroup rdma-lb
 * The output directory and the streamed traces of one scenario run (see the file comment).
 * Errors are returned as one line: the path and what went wrong.
 */
class RdmaScenarioOutput
{
  public:
    /**
     * Creates \p dir (unless empty) and opens the traces \p run asks for: pfc.txt (pfcTrace),
     * queue.txt and uplink.txt (queueTrace), rate.txt and retx.txt with their header lines
     * (rateTraceNs != 0); each to its file, or to memory when \p dir is empty. A previous
     * run's files are removed, \p simaiReportFile (if not empty) among them.
     * \return "" or the error
     */
    std::string Open(const std::string& dir,
                     const RdmaScenarioRun& run,
                     const std::string& simaiReportFile);
    /// Closes the traces' files. \return "" or the error (a write failed)
    std::string CloseTraces();
    /**
     * Writes \p files (name, text) in order as NAME.part, then renames every file of the run
     * in the order added (the traces first, the last of \p files last).
     * \return "" or the error
     */
    std::string Commit(const std::vector<std::pair<std::string, std::string>>& files);

    /// \return where pfc.txt rows go (nullptr: trace off)
    std::ostream* Pfc() const;
    /// \return where queue.txt rows go (nullptr: trace off)
    std::ostream* Queue() const;
    /// \return where uplink.txt rows go (nullptr: trace off)
    std::ostream* Uplink() const;
    /// \return where rate.txt rows go (nullptr: trace off)
    std::ostream* Rate() const;
    /// \return where retx.txt rows go (nullptr: trace off)
    std::ostream* Retx() const;

    /// \return pfc.txt's text when it went to memory, else ""
    std::string PfcText() const;
    /// \return queue.txt's text when it went to memory, else ""
    std::string QueueText() const;
    /// \return uplink.txt's text when it went to memory, else ""
    std::string UplinkText() const;
    /// \return rate.txt's text when it went to memory, else ""
    std::string RateText() const;
    /// \return retx.txt's text when it went to memory, else ""
    std::string RetxText() const;

  private:
    /// Opens trace \p name at \p out: its file \p file, or \p mem without a directory.
    /// \return "" or the error
    std::string OpenTrace(const char* name,
                          std::ofstream* file,
                          std::ostringstream* mem,
                          std::ostream** out);

    std::string m_dir;     //!< the output directory ("" = none)
    RdmaOutputDir m_files; //!< its files (temporary names, renamed at the end)
    std::ostream* m_pfc{nullptr};
    std::ostream* m_queue{nullptr};
    std::ostream* m_uplink{nullptr};
    std::ostream* m_rate{nullptr};
    std::ostream* m_retx{nullptr};
    std::ofstream m_pfcFile;
    std::ofstream m_queueFile;
    std::ofstream m_uplinkFile;
    std::ofstream m_rateFile;
    std::ofstream m_retxFile;
    std::ostringstream m_pfcMem;
    std::ostringstream m_queueMem;
    std::ostringstream m_uplinkMem;
    std::ostringstream m_rateMem;
    std::ostringstream m_retxMem;
};

} // namespace ns3

#endif /* RDMA_SCENARIO_OUTPUT_H */
