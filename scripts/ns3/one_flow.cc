// One bulk TCP flow on the speed comparison's path, in ns-3, for
// `scripts/ns3_compare.py`: the same path as bbrlab's bench path (100 Mbit/s
// forward, 20 ms each way, a 667-packet drop-tail queue at the bottleneck),
// so the two simulators' wall times can be compared run against run.
//
// Two nodes on one point-to-point link: the sender's device queue is the
// bottleneck queue (traffic control is removed, so no queue discipline sits
// in front of it), and ACKs come back over the same link's other direction.
// The socket buffers are raised far past the path's BDP (500 kB) so the
// window, not the buffer, limits the flow, as in bbrlab's simulator.
//
// Prints one line: `delivered_bytes=N simulated_s=S cc=NAME`, which the
// script checks, so a run that moved no data is not timed as a fast one.
//
// Build: g++ -O2 -std=c++17 one_flow.cc -o one_flow -lns3-core -lns3-network
//   -lns3-internet -lns3-point-to-point -lns3-applications -lns3-traffic-control
// (Debian's `libns3-dev`). Usage: one_flow [--cc=TcpBbr|TcpCubic] [--seconds=30]
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <iostream>
#include <string>

using namespace ns3;

int
main(int argc, char* argv[])
{
    std::string cc = "TcpBbr";
    double seconds = 30.0;
    CommandLine cmd;
    cmd.AddValue("cc", "congestion control: TcpBbr, TcpCubic, TcpNewReno, ...", cc);
    cmd.AddValue("seconds", "simulated seconds", seconds);
    cmd.Parse(argc, argv);
    if (seconds <= 0.0)
    {
        std::cerr << "one_flow: --seconds must be positive, got " << seconds << "\n";
        return 2;
    }
    TypeId tid;
    if (!TypeId::LookupByNameFailSafe("ns3::" + cc, &tid))
    {
        std::cerr << "one_flow: no congestion control ns3::" << cc << " in this ns-3\n";
        return 2;
    }

    // 1,448-byte segments: 1,500 bytes on the wire with IP and TCP
    // headers and timestamps, the size bbrlab's flows send.
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(tid));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(16 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(16 << 20));
    // BBR paces; ns-3 sends in bursts unless pacing is on.
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    link.SetChannelAttribute("Delay", StringValue("20ms"));
    link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("667p"));
    NetDeviceContainer devices = link.Install(nodes);

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer interfaces = addresses.Assign(devices);
    // Assigning addresses installed the default queue discipline; the
    // device's own drop-tail queue is to be the only one.
    TrafficControlHelper tc;
    tc.Uninstall(devices);

    const uint16_t port = 5000;
    BulkSendHelper source("ns3::TcpSocketFactory",
                          InetSocketAddress(interfaces.GetAddress(1), port));
    source.SetAttribute("MaxBytes", UintegerValue(0));
    source.SetAttribute("SendSize", UintegerValue(1448));
    ApplicationContainer senders = source.Install(nodes.Get(0));
    senders.Start(Seconds(0.0));
    senders.Stop(Seconds(seconds));

    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sinks = sinkHelper.Install(nodes.Get(1));
    sinks.Start(Seconds(0.0));
    sinks.Stop(Seconds(seconds));

    Simulator::Stop(Seconds(seconds));
    Simulator::Run();
    Ptr<PacketSink> sink = DynamicCast<PacketSink>(sinks.Get(0));
    std::cout << "delivered_bytes=" << sink->GetTotalRx() << " simulated_s=" << seconds
              << " cc=" << cc << std::endl;
    Simulator::Destroy();
    return 0;
}
