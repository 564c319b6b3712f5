/*
 * rdma-lb: a port's per-frame handler, bound as a function and an object pointer kept in the
 * port itself (ns3-module/doc/performance.md, "Fifth round: per-port state in few cache lines").
 *
 * An ns-3 Callback reaches its target through two heap objects (its CallbackImpl and the
 * std::function's stored functor), and passes the port as a Ptr (a reference count written on
 * the port's first cache line). On a large fabric a packet-hop visits ports at random, so each of
 * these is a cache miss, on every frame: on the 8,192-host leaf-spine they were a quarter of
 * the run's last-level misses (cachegrind). A hook is two words in the port and a direct call.
 * The port's Callback setters stay (tests and other users); they bind a hook that calls the
 * Callback.
 */
#ifndef RDMA_HOOK_H
#define RDMA_HOOK_H

namespace ns3
{

template <typename Signature>
class RdmaHook;

/**
 * \ingroup rdma-lb
 * A call of a member function on an object, stored by value: a function pointer and the object.
 * The object must outlive every call (a port's owner, a switch or a NIC, outlives its ports'
 * frames).
 */
template <typename R, typename... Args>
class RdmaHook<R(Args...)>
{
  public:
    /// No handler: operator bool is false.
    RdmaHook() = default;

    /// \return a hook calling (obj->*METHOD)(args...)
    template <class T, R (T::*METHOD)(Args...)>
    static RdmaHook Of(T* obj)
    {
        return RdmaHook(&Call<T, METHOD>, obj);
    }

    /// \return whether a handler is bound
    explicit operator bool() const
    {
        return m_fn != nullptr;
    }

    /// Calls the handler (which must be bound).
    R operator()(Args... args) const
    {
        return m_fn(m_obj, args...);
    }

  private:
    RdmaHook(R (*fn)(void*, Args...), void* obj)
        : m_fn(fn),
          m_obj(obj)
    {
    }

    template <class T, R (T::*METHOD)(Args...)>
    static R Call(void* obj, Args... args)
    {
        return (static_cast<T*>(obj)->*METHOD)(args...);
    }

    R (*m_fn)(void*, Args...){nullptr};
    void* m_obj{nullptr};
};

} // namespace ns3

#endif /* RDMA_HOOK_H */
