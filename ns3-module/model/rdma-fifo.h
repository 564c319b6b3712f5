/*
 * rdma-lb: the first-in first-out store of a port's priority queues and of a link's packets
 * in flight. One contiguous ring, allocated at the first push and doubled when full. A
 * std::deque allocates a 512-byte block and its map when it is constructed: with eight
 * queues per port and two directions per link, that was 16 MiB of empty queues on the REPS
 * paper's 1,024-host fabric (ns3-module/doc/performance.md, "Memory"). The FIFO itself is 24
 * bytes (a pointer and three 32-bit counters), so that a port's queue and its byte count share
 * a cache line (performance.md, "Sixth round").
 */
#ifndef RDMA_FIFO_H
#define RDMA_FIFO_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <utility>

namespace ns3
{

/**
 * \ingroup rdma-lb
 * A FIFO of \p T on a power-of-two ring. Only the queued elements are live objects: a push
 * constructs its element in a free slot (a store that reads nothing there: a slot's line is
 * cold by the time the ring comes back to it, at a port packets visit now and then), a pop
 * destroys it, so a Ptr held in it is released when it leaves, as a std::deque's would be.
 */
template <typename T>
class RdmaFifo
{
  public:
    RdmaFifo() = default;

    RdmaFifo(RdmaFifo&& other) noexcept
        : m_ring(std::move(other.m_ring)),
          m_head(std::exchange(other.m_head, 0)),
          m_size(std::exchange(other.m_size, 0)),
          m_capacity(std::exchange(other.m_capacity, 0))
    {
    }

    RdmaFifo& operator=(RdmaFifo&& other) noexcept
    {
        if (this != &other)
        {
            clear();
            m_ring = std::move(other.m_ring);
            m_head = std::exchange(other.m_head, 0);
            m_size = std::exchange(other.m_size, 0);
            m_capacity = std::exchange(other.m_capacity, 0);
        }
        return *this;
    }

    RdmaFifo(const RdmaFifo&) = delete;
    RdmaFifo& operator=(const RdmaFifo&) = delete;

    ~RdmaFifo()
    {
        clear();
    }

    /// \return whether nothing is queued
    bool empty() const
    {
        return m_size == 0;
    }

    /// \return the number of elements queued
    std::size_t size() const
    {
        return m_size;
    }

    /// \return the oldest element (the FIFO must not be empty)
    T& front()
    {
        return At(m_head);
    }

    /// Appends \p v, growing the ring when it is full.
    void push_back(T&& v)
    {
        if (m_size == m_capacity)
        {
            Grow();
        }
        ::new (static_cast<void*>(&m_ring[(m_head + m_size) & (m_capacity - 1)])) T(std::move(v));
        ++m_size;
    }

    /// Appends a copy of \p v.
    void push_back(const T& v)
    {
        push_back(T(v));
    }

    /// Removes the oldest element (the FIFO must not be empty).
    void pop_front()
    {
        At(m_head).~T();
        m_head = (m_head + 1) & (m_capacity - 1);
        --m_size;
    }

    /// \return the newest element (the FIFO must not be empty)
    T& back()
    {
        return At((m_head + m_size - 1) & (m_capacity - 1));
    }

    /// Removes the newest element (the FIFO must not be empty).
    void pop_back()
    {
        back().~T();
        --m_size;
    }

    /// Removes every element and frees the ring.
    void clear()
    {
        while (m_size > 0)
        {
            pop_front();
        }
        m_ring.reset();
        m_capacity = 0;
        m_head = 0;
    }

  private:
    /// Room for one element; a live one only while it is queued.
    struct alignas(T) Cell
    {
        unsigned char bytes[sizeof(T)];
    };

    /// \return the live element in slot \p i
    T& At(uint32_t i)
    {
        return *std::launder(reinterpret_cast<T*>(&m_ring[i]));
    }

    /// Doubles the ring (4 slots at the first push), the oldest element first.
    void Grow()
    {
        const uint32_t capacity = m_capacity == 0 ? 4 : 2 * m_capacity;
        std::unique_ptr<Cell[]> bigger(new Cell[capacity]);
        for (uint32_t i = 0; i < m_size; ++i)
        {
            T& old = At((m_head + i) & (m_capacity - 1));
            ::new (static_cast<void*>(&bigger[i])) T(std::move(old));
            old.~T();
        }
        m_ring = std::move(bigger);
        m_capacity = capacity;
        m_head = 0;
    }

    std::unique_ptr<Cell[]> m_ring; //!< m_capacity slots
    uint32_t m_head{0};             //!< index of the oldest element
    uint32_t m_size{0};             //!< elements queued
    uint32_t m_capacity{0};         //!< 0 or a power of two
};

} // namespace ns3

#endif /* RDMA_FIFO_H */
