require "json"
require "openssl"

class Receiver
  def initialize(secret, queue)
    @secret = secret
    @queue = queue
  end

  def call(env)
    payload = JSON.parse(env["rack.input"].read)
    @queue.push([payload, env["HTTP_X_LEDGERLY_SIGNATURE"]])
    [202, {}, []]
  end

  def verify(payload, header)
    body = JSON.generate(payload)
    expected = "v1=" + OpenSSL::HMAC.hexdigest("SHA256", @secret, body)
    Rack::Utils.secure_compare(expected, header.to_s)
  end
end
