require_relative "spec_helper"

# The README's opening example runs, and every `# =>` in it holds.
RSpec.describe "README.md" do
  it "opens with [0, true, false, nil].to_msgpack, and its example holds" do
    text = File.read(File.join(SPEC_ROOT, "ruby", "README.md"))
    code = text[/```ruby\n(.*?)```/m, 1]
    expect(code).to include("[0, true, false, nil].to_msgpack")
    lines = code.lines.grep(/# =>/)
    expect(lines.size).to eq(2)
    lines.each do |line|
      expr, want = line.split("# =>").map(&:strip)
      expect(eval(expr).inspect).to eq(want) # rubocop:disable Security/Eval
    end
  end
end
